/**
 * Review 79, packed session states as a property: a long session in a store outside the
 * process (states as JSON text, a file per session, a real Redis) driven through what the
 * world does: restarts, rewinds, forks, another conversation under the same id, message ids
 * reused, calls answered out of order, a store that throws for a while, a state written
 * before packing (every list an array) or by an earlier version beside a packed one, and a
 * forged packed form or token-count record. After every call: a fresh manager on the stored
 * session (a copy of the store) sends exactly what the warm one sends, every tool call goes
 * with its results, the newest message goes last, and the caller's messages are left as given.
 * `FC_CASE='<counterexample JSON>'` replays one run; `PACKED_PROPERTY_DEBUG=1` prints coverage.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactManager, type SessionState, type SessionStore } from '../../src/index.js';
import { redisSessionStore } from '../../src/storage/redis/redis-session-store.js';
import { type ChatMessage, pairingHolds, turnsOf } from '../support/history-jumps.js';
import { HostileStore, JsonTextStore } from '../support/hostile-store.js';
import { jsonFileStore } from '../support/json-file-store.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { scaled } from '../support/test-scale.js';

const KEY = 'packed-states-property-key-0123456789';
const SEED = Number(process.env.FC_SEED ?? 20_261_130);
const RUNS = Number(process.env.FC_RUNS ?? scaled(12, 4));
const A = 'session-a';
const B = 'session-b';

/** Ways a token-count record is mangled: halved, non-digits, another scope, every count blank. */
type CountsForgery = 'lengths' | 'garbage' | 'scope' | 'blanks';
type Corruption = 'count-up' | 'count-down' | 'separators' | 'version' | 'unknown-list' | 'rewrite-lines';
type Op =
  | { kind: 'grow'; turns: number }
  | { kind: 'restart' }
  | { kind: 'rewind'; at: number }
  | { kind: 'fork' }
  | { kind: 'switch' }
  | { kind: 'other' }
  | { kind: 'fault'; reads: number; writes: number }
  | { kind: 'late'; delays: number[] }
  | { kind: 'together' }
  | { kind: 'legacy' }
  | { kind: 'carried' }
  | { kind: 'corrupt'; how: Corruption }
  | { kind: 'counts'; how: CountsForgery };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 4 }).map<Op>((turns) => ({ kind: 'grow', turns })) },
  { weight: 3, arbitrary: fc.constant<Op>({ kind: 'restart' }) },
  { weight: 1, arbitrary: fc.nat(60).map<Op>((at) => ({ kind: 'rewind', at })) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: 'fork' }) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: 'switch' }) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: 'other' }) },
  {
    weight: 1,
    arbitrary: fc
      .record({ reads: fc.nat(3), writes: fc.nat(3) })
      .map<Op>(({ reads, writes }) => ({ kind: 'fault', reads, writes })),
  },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.nat(6), { minLength: 1, maxLength: 5 })
      .map<Op>((delays) => ({ kind: 'late', delays })),
  },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: 'together' }) },
  { weight: 2, arbitrary: fc.constant<Op>({ kind: 'legacy' }) },
  { weight: 2, arbitrary: fc.constant<Op>({ kind: 'carried' }) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom<Corruption>(
        'count-up',
        'count-down',
        'separators',
        'version',
        'unknown-list',
        'rewrite-lines',
      )
      .map<Op>((how) => ({ kind: 'corrupt', how })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<CountsForgery>('lengths', 'garbage', 'scope', 'blanks')
      .map<Op>((how) => ({ kind: 'counts', how })),
  },
);

/**
 * Message ids the caller gives (`meta.id`): none (content hashes), plain ones (`m0`, reused by
 * every conversation), or odd ones (spaces, tabs, newlines, `__proto__`), which no packed list can hold.
 */
type IdStyle = 'none' | 'plain' | 'odd';
const ODD_IDS = ['__proto__', 'constructor', 'a b', 'tab\there', 'new\nline', ' ', ''];

/** A run's shape: its ops, tool rounds, message ids given by the caller, the window. */
const runArbitrary = fc.record({
  ops: fc.array(opArbitrary, { minLength: 8, maxLength: 24 }),
  tools: fc.boolean(),
  metaIds: fc.constantFrom<IdStyle>('none', 'plain', 'odd'),
  start: fc.integer({ min: 40, max: 90 }),
  window: fc.constantFrom(2_500, 6_000, 16_000, 64_000),
});
type Run = typeof runArbitrary extends fc.Arbitrary<infer R> ? R : never;

/** The caller: one history per key, the active key, where new turns come from. */
interface Caller {
  histories: Map<string, ChatMessage[]>;
  active: string;
  conversation: number;
  fresh: number;
  /** Sessions whose stored state was forged into one the store's check rejects, not called since. */
  rejected: Set<string>;
}

/** `n` new turns of the caller's conversation (ids `call_0`, ... and `m0`, ... reused across conversations). */
function newTurns(caller: Caller, run: Run, n: number): ChatMessage[] {
  const turns = turnsOf(`c${caller.conversation}n${caller.fresh++}x`, n, { tools: run.tools }).flat();
  if (run.metaIds === 'none') return turns;
  const at = (caller.histories.get(caller.active) ?? []).length;
  const id = (n: number) =>
    run.metaIds === 'plain' || n % 5 !== 0 ? `m${n}` : `${ODD_IDS[(n / 5) % ODD_IDS.length]}${n}`;
  return turns.map((m, k) => ({ ...m, meta: { id: id(at + k) } }) as ChatMessage);
}

/** Turn ends of a history (after an assistant answer with no tool call). */
function turnEnds(history: readonly ChatMessage[]): number[] {
  const ends: number[] = [];
  history.forEach((m, k) => {
    if (m.role === 'assistant' && m.tool_calls === undefined) ends.push(k + 1);
  });
  return ends;
}

const withoutMeta = (m: ChatMessage): ChatMessage => {
  const { meta: _meta, ...rest } = m as ChatMessage & { meta?: unknown };
  return rest;
};

/** Calls where the stored state held a packed list, and fresh-vs-warm comparisons, over all runs. */
const seen = { packedCalls: 0, packedRewrites: 0, compared: 0, corrupted: 0, countsForged: 0, faults: 0 };

/** The stored state of `key` as raw JSON (packed form), through the store's inner layer. */
async function rawState(store: HostileStore, key: string): Promise<Record<string, unknown> | undefined> {
  for (const k of store.keys)
    if (k === key || (!k.includes('::') && k.endsWith(key)))
      return (await store.raw(k)) as Record<string, unknown> | undefined;
  return undefined;
}

/** The store key the manager wrote `sessionId`'s state under (the one without a `::` suffix). */
function stateKeys(store: HostileStore): string[] {
  return [...store.keys].filter((k) => !k.includes('::'));
}

/** Forges the packed form of every stored state (see {@link Corruption}); returns their keys. */
async function corrupt(store: HostileStore, how: Corruption): Promise<string[]> {
  const forged: string[] = [];
  for (const key of stateKeys(store)) {
    const state = (await store.raw(key)) as (SessionState & Record<string, unknown>) | undefined;
    const packed = state?.packed as Record<string, { count: number; text: string } | number> | undefined;
    if (!state || !packed) continue;
    seen.corrupted++;
    forged.push(key);
    const lists = Object.entries(packed).filter(([field]) => field !== 'v') as [
      string,
      { count: number; text: string },
    ][];
    if (how === 'version') packed.v = 2;
    else if (how === 'unknown-list') (packed as Record<string, unknown>).summaryIds = { count: 1, text: 'x' };
    else
      for (const [, list] of lists) {
        if (how === 'count-up') list.count += 7;
        if (how === 'count-down') list.count = Math.max(0, list.count - 5);
        if (how === 'separators') list.text = list.text.replaceAll(' ', '  ').replaceAll('\n', '\n\n');
        if (how === 'rewrite-lines') list.text = list.text.replaceAll('\t', '\t\t');
      }
    await store.inner.set(key, state);
  }
  return forged;
}

/** An earlier version's write: every list an array, no packed form (`carried`: the packed form carried over beside the filled lists). */
async function rewriteUnpacked(store: HostileStore, carried: boolean): Promise<void> {
  for (const key of stateKeys(store)) {
    const stored = (await store.raw(key)) as SessionState | undefined;
    if (!stored?.packed) continue;
    const probe = new JsonTextStore();
    probe.texts.set(key, JSON.stringify(stored));
    // The manager's own read of it (unpacked), as an earlier version would have held it.
    const reader = new CompactManager({ model: 'gpt-4o', summaryKeys: KEY, store: probe });
    const state = await reader.state(key);
    await reader.shutdown();
    if (!state) continue;
    const read = JSON.parse(JSON.stringify(state)) as SessionState;
    await store.inner.set(key, carried ? { ...read, packed: stored.packed } : read);
  }
}

/** Forges the token-count records (`<key>::counts`). */
async function forgeCounts(store: HostileStore, how: CountsForgery): Promise<void> {
  for (const key of store.keys) {
    if (!key.endsWith('::counts')) continue;
    const record = (await store.raw(key)) as
      | (SessionState & { tokenCounts?: { scope: string; hashes: string; tokens: string } })
      | undefined;
    const counts = record?.tokenCounts;
    if (!record || !counts) continue;
    seen.countsForged++;
    if (how === 'lengths') counts.tokens = counts.tokens.slice(0, Math.floor(counts.tokens.length / 2));
    if (how === 'garbage') counts.tokens = counts.tokens.replace(/[0-9]+/g, (d) => `${d}x`);
    if (how === 'scope') counts.scope = 'another|gpt-4o|openai';
    // As many entries as hashes, none of them a count.
    if (how === 'blanks') counts.tokens = counts.tokens.replace(/[0-9]+/g, '');
    await store.inner.set(key, record);
  }
}

/** One call of `key`: the fresh manager on a copy of the store and the warm one, compared. */
async function step(
  world: World,
  key: string,
  history: ChatMessage[],
  where: string,
  compare: boolean,
): Promise<ChatMessage[]> {
  const given = JSON.stringify(history);
  const raw = await rawState(world.store, key);
  if (raw?.packed !== undefined) seen.packedCalls++;
  if ((raw?.packed as { rewrites?: unknown } | undefined)?.rewrites !== undefined) seen.packedRewrites++;
  let fresh: ChatMessage[] | undefined;
  if (compare) {
    await world.warm.flush();
    const manager = world.mk(await world.store.copy());
    try {
      fresh = (await manager.preflight(key, history)) as ChatMessage[];
    } finally {
      await manager.shutdown();
    }
    expect(JSON.stringify(history), `${where}: the fresh manager left the caller's messages as given`).toBe(
      given,
    );
  }
  const out = (await world.warm.preflight(key, history)) as ChatMessage[];
  expect(JSON.stringify(history), `${where}: the caller's messages as given`).toBe(given);
  if (
    fresh !== undefined &&
    process.env.PACKED_PROPERTY_DEBUG &&
    JSON.stringify(fresh) !== JSON.stringify(out)
  ) {
    const brief = (ms: ChatMessage[]) => ms.map((m) => `${m.role}:${String(m.content).slice(0, 40)}`);
    console.log(where, 'history', history.length, 'thrown', world.store.thrown);
    console.log('fresh', JSON.stringify(brief(fresh).slice(0, 4)), fresh.length);
    console.log('warm', JSON.stringify(brief(out).slice(0, 4)), out.length);
    console.log('state', JSON.stringify(await rawState(world.store, key)).slice(0, 600));
  }
  if (fresh !== undefined) {
    seen.compared++;
    expect(fresh, `${where}: a fresh manager on the stored session sends what the warm one sends`).toEqual(
      out,
    );
  }
  expect(pairingHolds(out), `${where}: tool calls with their results`).toBe(true);
  expect(out.at(-1), `${where}: the newest message last`).toEqual(withoutMeta(history.at(-1)!));
  return out;
}

/** The store, the warm manager and how a manager is made. */
interface World {
  warm: CompactManager;
  store: HostileStore;
  mk: (store: SessionStore) => CompactManager;
}

/** Does what `op` says to the world and the caller; returns the history of the next call. */
async function nextHistory(
  world: World,
  caller: Caller,
  run: Run,
  op: Op,
  where: string,
): Promise<ChatMessage[]> {
  const { store } = world;
  let history = caller.histories.get(caller.active)!;
  const grow = (turns = 1) => [...history, ...newTurns(caller, run, turns)];
  switch (op.kind) {
    case 'restart':
      await world.warm.shutdown();
      world.warm = world.mk(store);
      history = grow();
      break;
    case 'rewind': {
      const ends = turnEnds(history);
      history = [...history.slice(0, ends[op.at % ends.length] ?? 0)];
      history = grow(2);
      break;
    }
    case 'fork':
      caller.histories.set(B, grow());
      history = grow();
      break;
    case 'switch':
      if (caller.histories.has(B)) caller.active = caller.active === A ? B : A;
      history = caller.histories.get(caller.active)!;
      history = grow();
      break;
    case 'other':
      caller.conversation++;
      history = [];
      history = grow(run.start > 60 ? 20 : 3);
      break;
    case 'fault':
      store.faults.reads = op.reads;
      store.faults.writes = op.writes;
      if (op.reads + op.writes > 0) seen.faults++;
      history = grow();
      break;
    case 'late':
      store.faults.delays = op.delays;
      history = grow();
      break;
    case 'together': {
      const other = caller.active === A ? B : A;
      const theirs = [...(caller.histories.get(other) ?? history), ...newTurns(caller, run, 1)];
      history = grow();
      caller.histories.set(other, theirs);
      const [mine, them] = await Promise.all([
        world.warm.preflight(caller.active, history),
        world.warm.preflight(other, theirs),
      ]);
      for (const out of [mine, them] as ChatMessage[][])
        expect(pairingHolds(out), `${where}: tool calls with their results`).toBe(true);
      caller.histories.set(caller.active, history);
      history = grow();
      break;
    }
    case 'legacy':
    case 'carried':
      await world.warm.flush();
      await rewriteUnpacked(store, op.kind === 'carried');
      history = grow();
      break;
    case 'corrupt':
      await world.warm.flush();
      for (const key of await corrupt(store, op.how))
        if (op.how === 'version' || op.how === 'unknown-list') caller.rejected.add(key);
      history = grow();
      break;
    case 'counts':
      await world.warm.flush();
      await forgeCounts(store, op.how);
      history = grow();
      break;
    default:
      history = grow(op.turns);
  }
  return history;
}

async function runSession(run: Run, open: () => SessionStore): Promise<void> {
  const options = { model: 'gpt-4o', maxContextTokens: run.window, summaryKeys: KEY } as const;
  const store = new HostileStore(open());
  const mk = (s: SessionStore) => new CompactManager({ ...options, store: s });
  const world: World = { store, mk, warm: mk(store) };
  const caller: Caller = { histories: new Map(), active: A, conversation: 0, fresh: 0, rejected: new Set() };
  caller.histories.set(A, newTurns(caller, run, run.start));
  // A store fault met by the last call (see the loop).
  let outage = false;
  try {
    await step(world, A, caller.histories.get(A)!, 'first call', true);
    for (const [n, op] of run.ops.entries()) {
      // After a fault the warm manager goes on from its own copy through the store's cool-down
      // (a second): the outage ends here and that process is replaced (its kept writes lost).
      if (outage) {
        store.faults.reads = 0;
        store.faults.writes = 0;
        await world.warm.shutdown();
        world.warm = world.mk(store);
        outage = false;
      }
      const thrown = store.thrown;
      const where = `op ${n} ${JSON.stringify(op)}`;
      const history = await nextHistory(world, caller, run, op, where);
      caller.histories.set(caller.active, history);
      // A state the store's check rejects is deleted: a fresh manager starts over, the warm one
      // writes its own copy back (versions never go down), by design; compared from the next call.
      const compare = op.kind !== 'fault' && !caller.rejected.delete(caller.active);
      await step(world, caller.active, history, where, compare);
      outage = store.thrown !== thrown || store.faults.reads + store.faults.writes > 0;
    }
  } finally {
    store.faults.reads = 0;
    store.faults.writes = 0;
    await world.warm.shutdown();
  }
}

describe('packed session states, as the world uses them (review 79)', () => {
  // Registered only when asked for (not a skipped test in every run's count).
  const replay = process.env.FC_CASE;
  if (replay !== undefined)
    it('replays FC_CASE', async () => {
      await runSession(JSON.parse(replay) as Run, () => new JsonTextStore());
    });

  it(`a store holding JSON text (${RUNS} runs, seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(runArbitrary, async (run) => {
        await runSession(run, () => new JsonTextStore());
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(seen.packedCalls, 'calls found a packed state in the store').toBeGreaterThan(RUNS);
    expect(seen.compared, 'fresh and warm managers compared').toBeGreaterThan(RUNS * 4);
    expect(seen.corrupted, 'packed forms forged').toBeGreaterThan(0);
    if (process.env.PACKED_PROPERTY_DEBUG) console.log(JSON.stringify(seen));
  });

  it(`a file per session (${Math.ceil(RUNS / 2)} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(runArbitrary, async (run) => {
        const dir = await mkdtemp(join(tmpdir(), 'packed-property-'));
        try {
          await runSession(run, () => jsonFileStore(dir));
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { seed: SEED + 1, numRuns: Math.ceil(RUNS / 2), endOnFailure: true },
    );
  });

  describe('a real Redis', () => {
    const withRedis = redisAvailable('packed-states Redis property');
    let server: RedisTestServer | undefined;
    beforeAll(async () => {
      if (withRedis) server = await startRedisServer();
    });
    afterAll(async () => {
      await server?.stop();
    });
    it.runIf(withRedis)(`one store shared by every restart (${Math.ceil(RUNS / 2)} runs)`, async () => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(runArbitrary, async (run) => {
          const store = redisSessionStore({ url: server!.url, keyPrefix: `packed:${n++}:` });
          try {
            await runSession(run, () => store);
          } finally {
            await store.close();
          }
        }),
        { seed: SEED + 2, numRuns: Math.ceil(RUNS / 2), endOnFailure: true },
      );
    });
  });
});
