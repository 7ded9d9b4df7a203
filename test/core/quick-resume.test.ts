/**
 * Issue 47 point 1: the first call of a fresh manager (a new process) on a known session
 * answers from the session's quick record (preflight/quick/quick-resume.ts) without indexing its
 * history, and sends exactly what a manager that served the session all along sends; its
 * next call, after the session was indexed behind it, too. Anything the record cannot vouch
 * for takes the full path, with the same answer.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { quickKey } from '../../src/core/store/stored-counts.js';
import { CompactManager, MemorySessionStore, type SessionStore } from '../../src/index.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';
import { jsonFileStore } from '../support/json-file-store.js';
import {
  copy,
  describeQuickCaseInRedis,
  expectQuickLikeWarm,
  freshCalls,
  sent,
} from '../support/quick-resume-cases.js';

/** A window no history here reaches: the calls never compact. */
const options = { model: 'gpt-4o', maxContextTokens: 50_000_000 } as const;

/** A session of over 1,000 messages (one with `meta`), ending on a user message. */
function history(): unknown[] {
  return syntheticSession({ turns: 300, seed: 11, toolDensity: 2.5, resultChars: 400 });
}

const ask = (i: number) => ({ role: 'user', content: `follow-up ${i}: run the tests again` });

/** A manager that serves `calls` calls of the session (one message appended each), then stops. */
async function serve(store: SessionStore, messages: unknown[], calls: number): Promise<void> {
  const manager = new CompactManager({ ...options, store });
  for (let i = 0; i < calls; i++) {
    messages.push(ask(i));
    await manager.compact('s', messages);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await manager.shutdown();
}

/** The answers of a manager that serves `messages` and then each of `next` warm. */
async function warmAnswers(messages: unknown[], next: unknown[][]) {
  const manager = new CompactManager(options);
  await manager.compact('s', messages);
  await manager.flush();
  const out = [];
  for (const m of next) out.push(sent(await manager.compact('s', m)));
  await manager.shutdown();
  return out;
}

async function quickCase(store: SessionStore) {
  const messages = history();
  await serve(store, messages, 3);
  expect(messages.length).toBeGreaterThan(1_000);
  const first = [...messages, ask(10)];
  const second = [...first, { role: 'assistant', content: 'done' }, ask(11)];
  const fresh = await freshCalls(options, store, first, second);
  const warm = await warmAnswers(messages, [first, second]);
  return { fresh, warm };
}

describe('a fresh manager on a known session', () => {
  it('answers its first call without indexing the history and sends what a warm manager sends (memory)', async () => {
    const { fresh, warm } = await quickCase(new MemorySessionStore());
    expectQuickLikeWarm({ fresh, warm });
  });

  it('the same through a file store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quick-resume-'));
    try {
      const { fresh, warm } = await quickCase(jsonFileStore(dir));
      expectQuickLikeWarm({ fresh, warm });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a changed message among the newest takes the full path; a compacted session the quick one; same answers', async () => {
    const store = new MemorySessionStore();
    const messages = history();
    await serve(store, messages, 2);
    const edited = copy(messages) as { role: string; content: unknown }[];
    const k = edited.length - 3;
    edited[k] = { ...edited[k]!, content: `${String(edited[k]!.content)} (edited)` };
    const first = [...edited, ask(10)];
    const fresh = await freshCalls(options, store, first, [...first, ask(11)]);
    expect(fresh.indexed).toBe(true);
    const [warm] = await warmAnswers(edited, [first]);
    expect(fresh.first).toEqual(warm);
    // A session that compacted: its record holds the request's layout (quick-resume-compacted.test.ts).
    const small = new MemorySessionStore();
    const compacting = { ...options, maxContextTokens: 32_000 };
    const served = new CompactManager({ ...compacting, store: small });
    const grown = history();
    expect((await served.compact('s', grown)).applied).toBe(true);
    grown.push(ask(1));
    const expected = sent(await served.compact('s', grown));
    await served.shutdown();
    const again = new CompactManager({ ...compacting, store: small });
    const got = await again.compact('s', copy(grown));
    expect(again.cacheStatus().sessions).toBe(0);
    await again.shutdown();
    expect(sent(got)).toEqual(expected);
  });

  it('an old message edited to the same shape is found after the call: the record is dropped', async () => {
    const store = new MemorySessionStore();
    const messages = history();
    await serve(store, messages, 2);
    expect(await store.get(quickKey('s'))).toBeDefined();
    const edited = copy(messages) as { role: string; content: unknown }[];
    // Not among the sampled positions (the newest and a few probes); same length, other words.
    const k = edited.findIndex(
      (m, i) => i > 100 && i % 7 === 3 && m.role === 'user' && typeof m.content === 'string',
    );
    const text = edited[k]!.content as string;
    edited[k] = {
      ...edited[k]!,
      content: `${'Zq '.repeat(Math.floor(text.length / 3))}`.padEnd(text.length, 'Z'),
    };
    const first = [...edited, ask(10)];
    const second = [...first, ask(11)];
    const manager = new CompactManager({ ...options, store });
    await manager.compact('s', copy(first));
    expect(manager.cacheStatus().sessions).toBe(0);
    await manager.flush();
    expect(await store.get(quickKey('s'))).toBeUndefined();
    // Its next call counts exactly: what a warm manager sends.
    const next = sent(await manager.compact('s', copy(second)));
    await manager.shutdown();
    const [, warm] = await warmAnswers(edited, [first, second]);
    expect(next).toEqual(warm);
  });

  it('a call observed by listeners, or with new messages that do not pair, takes the full path', async () => {
    const store = new MemorySessionStore();
    const messages = history();
    await serve(store, messages, 2);
    const observed = new CompactManager({ ...options, store });
    let estimates = 0;
    observed.on('compact.token_estimate', () => estimates++);
    const first = [...messages, ask(10)];
    const a = await observed.compact('s', copy(first));
    expect(estimates).toBe(1);
    expect(observed.cacheStatus().sessions).toBe(1);
    await observed.shutdown();
    const [warm] = await warmAnswers(messages, [first]);
    expect(sent(a)).toEqual(warm);
    // An orphan tool result among the new messages: rejected as a warm manager rejects it.
    const orphan = [...messages, { role: 'tool', tool_call_id: 'call_nowhere', content: 'late' }, ask(10)];
    const unpaired = new CompactManager({ ...options, store });
    await expect(unpaired.compact('s', copy(orphan))).rejects.toMatchObject({
      code: 'invalid_messages',
      message: expect.stringContaining(`messages[${messages.length}]`),
    });
    await unpaired.shutdown();
  });
});

describeQuickCaseInRedis('quick resume', quickCase);
