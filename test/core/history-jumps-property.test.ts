/**
 * Issue 33 point 5, one invariant as a property: sessions that grow, rewind, edit in place,
 * truncate, fork and alternate, switch conversations under one id, restart (a store that
 * forgets, a store that outlives the process, a real Redis), and pass back persisted views.
 * After every call the request is: pinned messages + at most one trusted summary that names
 * only what the given history holds + the given history's messages in order, newest last,
 * every tool call with its result, under the window.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { SessionStore } from '../../src/core/session/session-store.js';
import { MemorySessionStore } from '../../src/core/session/session-store.js';
import { SummaryMarks } from '../../src/core/summary/summary-mark.js';
import { redisSessionStore } from '../../src/storage/redis/redis-session-store.js';
import { type ChatMessage, foreignMarkers, pairingHolds, turnsOf } from '../support/history-jumps.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { scaled } from '../support/test-scale.js';

const KEY = 'history-jumps-property-key-0123456789';
const SEED = Number(process.env.FC_SEED ?? 20_261_127);
const RUNS = Number(process.env.FC_RUNS ?? scaled(60, 12));
const SESSION = 'one-id';

type Op =
  | { kind: 'grow' }
  | { kind: 'rewind'; at: number }
  | { kind: 'edit'; at: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'fork' }
  | { kind: 'switch' }
  | { kind: 'other' }
  | { kind: 'restart' }
  | { kind: 'persisted' };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Op>({ kind: 'grow' }) },
  { weight: 1, arbitrary: fc.nat(40).map<Op>((at) => ({ kind: 'rewind', at })) },
  { weight: 1, arbitrary: fc.nat(40).map<Op>((at) => ({ kind: 'edit', at })) },
  { weight: 1, arbitrary: fc.nat(40).map<Op>((at) => ({ kind: 'truncate', at })) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: 'fork' }) },
  { weight: 2, arbitrary: fc.constant<Op>({ kind: 'switch' }) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: 'other' }) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: 'restart' }) },
  { weight: 3, arbitrary: fc.constant<Op>({ kind: 'persisted' }) },
);

/** Where the caller is: the history it sends, a saved branch, the source of new turns. */
interface Caller {
  history: ChatMessage[];
  branch: ChatMessage[] | undefined;
  lastOut: ChatMessage[] | undefined;
  conversations: number;
  fresh: number;
}

/** A new turn of its own conversation (markers never seen before). */
function newTurn(caller: Caller, tools: boolean): ChatMessage[] {
  caller.fresh++;
  return turnsOf(`c${caller.conversations}n${caller.fresh}x`, 1, { tools })[0]!;
}

/** Turn boundaries of a history (positions after each turn's last message). */
function turnEnds(history: readonly ChatMessage[]): number[] {
  const ends: number[] = [];
  history.forEach((message, k) => {
    const next = history[k + 1];
    if (message.role === 'assistant' && message.tool_calls === undefined && (!next || next.role === 'user'))
      ends.push(k + 1);
  });
  return ends;
}

/** Applies `op` to the caller; returns the history of the next call. */
function apply(caller: Caller, op: Op, tools: boolean): ChatMessage[] {
  const ends = turnEnds(caller.history);
  const cut = (at: number) => (ends.length === 0 ? 0 : ends[at % ends.length]!);
  switch (op.kind) {
    case 'rewind':
      caller.history = [...caller.history.slice(0, cut(op.at)), ...newTurn(caller, tools)];
      break;
    case 'edit': {
      const starts = [0, ...ends.slice(0, -1)];
      const at = starts[op.at % Math.max(1, starts.length)] ?? 0;
      const original = caller.history[at];
      if (original?.role === 'user')
        caller.history = caller.history.map((m, k) =>
          k === at ? { ...m, content: `${m.content} mk-c${caller.conversations}e${++caller.fresh}u` } : m,
        );
      caller.history = [...caller.history, ...newTurn(caller, tools)];
      break;
    }
    case 'truncate':
      caller.history = caller.history.slice(0, Math.max(ends[0] ?? 0, cut(op.at)));
      if (caller.history.length === 0) caller.history = newTurn(caller, tools);
      break;
    case 'fork':
      caller.branch = caller.history;
      caller.history = [...caller.history, ...newTurn(caller, tools)];
      break;
    case 'switch':
      if (caller.branch)
        [caller.history, caller.branch] = [[...caller.branch, ...newTurn(caller, tools)], caller.history];
      else caller.history = [...caller.history, ...newTurn(caller, tools)];
      break;
    case 'other':
      caller.conversations++;
      caller.branch = undefined;
      caller.history = newTurn(caller, tools);
      break;
    case 'persisted':
      caller.history = [...(caller.lastOut ?? caller.history), ...newTurn(caller, tools)];
      break;
    default:
      caller.history = [...caller.history, ...newTurn(caller, tools)];
  }
  return caller.history;
}

/** The output's messages, the summary aside, appear in the given history in order (tool results may be rewritten). */
function isSubsequence(
  given: readonly ChatMessage[],
  out: readonly ChatMessage[],
  marks: SummaryMarks,
): boolean {
  let k = 0;
  for (const message of out) {
    if (typeof message.content === 'string' && marks.verify(SESSION, message.content)) continue;
    const same = (m: ChatMessage) =>
      message.role === 'tool'
        ? m.role === 'tool' && m.tool_call_id === message.tool_call_id
        : JSON.stringify(m) === JSON.stringify(message);
    while (k < given.length && !same(given[k]!)) k++;
    if (k === given.length) return false;
    k++;
  }
  return true;
}

/** Calls whose request carried a summary, over all runs (the property must exercise them). */
let summarizedCalls = 0;

async function runSession(ops: Op[], tools: boolean, openStore: (restart: boolean) => SessionStore) {
  const marks = new SummaryMarks(KEY);
  const mk = (restart: boolean) =>
    new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 2_500,
      summaryKeys: KEY,
      store: openStore(restart),
    });
  let manager = mk(false);
  const caller: Caller = { history: [], branch: undefined, lastOut: undefined, conversations: 0, fresh: 0 };
  try {
    for (const op of [{ kind: 'grow' } as Op, ...ops]) {
      if (op.kind === 'restart') {
        await manager.shutdown();
        manager = mk(true);
      }
      const given = apply(caller, op, tools);
      const out = (await manager.preflight(SESSION, given)) as ChatMessage[];
      const where = `after ${op.kind} (${given.length} messages)`;
      expect(foreignMarkers(given, out), `${where}: nothing the given history does not hold`).toEqual([]);
      expect(out.at(-1), `${where}: the newest message last`).toEqual(given.at(-1));
      const summaries = out.filter((m) => typeof m.content === 'string' && marks.verify(SESSION, m.content));
      expect(summaries.length, `${where}: at most one trusted summary`).toBeLessThanOrEqual(1);
      summarizedCalls += summaries.length;
      expect(isSubsequence(given, out, marks), `${where}: the rest is the given history, in order`).toBe(
        true,
      );
      expect(pairingHolds(out), `${where}: tool calls with their results`).toBe(true);
      expect(manager.estimate(out).total, `${where}: under the window`).toBeLessThanOrEqual(manager.budget);
      caller.lastOut = out;
    }
  } finally {
    await manager.shutdown();
  }
}

const opsArbitrary = fc.tuple(fc.array(opArbitrary, { minLength: 10, maxLength: 45 }), fc.boolean());

describe('histories that jump, as a property (issue 33)', () => {
  it(`a store that forgets on restart (memory) (${RUNS} runs, seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(opsArbitrary, async ([ops, tools]) => {
        let store = new MemorySessionStore();
        await runSession(ops, tools, (restart) => {
          if (restart) store = new MemorySessionStore();
          return store;
        });
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(summarizedCalls, 'the runs send summaries').toBeGreaterThan(RUNS);
  });

  it(`a store that outlives the process (${RUNS} runs, seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(opsArbitrary, async ([ops, tools]) => {
        const store = new MemorySessionStore();
        await runSession(ops, tools, () => store);
      }),
      { seed: SEED + 1, numRuns: RUNS, endOnFailure: true },
    );
  });

  describe('a real Redis', () => {
    const withRedis = redisAvailable('history-jumps Redis property');
    let server: RedisTestServer | undefined;
    beforeAll(async () => {
      if (withRedis) server = await startRedisServer();
    });
    afterAll(async () => {
      await server?.stop();
    });
    it.runIf(withRedis)(`shared by every restart (${Math.ceil(RUNS / 3)} runs)`, async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(opsArbitrary, async ([ops, tools]) => {
          const keyPrefix = `jumps:${run++}:`;
          const stores: ReturnType<typeof redisSessionStore>[] = [];
          try {
            await runSession(ops, tools, () => {
              stores.push(redisSessionStore({ url: server!.url, keyPrefix }));
              return stores.at(-1)!;
            });
          } finally {
            await Promise.all(stores.map((store) => store.close()));
          }
        }),
        { seed: SEED + 2, numRuns: Math.ceil(RUNS / 3), endOnFailure: true },
      );
    });
  });
});
