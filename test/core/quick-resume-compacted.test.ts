/**
 * Issue 47 point 1, a session that compacted: the first call of a fresh manager (a new process)
 * answers from the session's quick record (preflight/quick/quick-compacted.ts) without indexing the
 * history the summary covers, and sends exactly what the manager that served the session all
 * along sends; its next call, once the session was indexed behind it, too. An edited history
 * (a rewind, a fork, a changed covered message) takes the full path, or, when the sampled print
 * cannot see the edit, is found after the call and the record dropped.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { samplePositions } from '../../src/core/preflight/quick/quick-print.js';
import { unpackState } from '../../src/core/session/packed-state.js';
import {
  type CompactedLayout,
  type PackedLayout,
  type QuickRecord,
  quickKey,
} from '../../src/core/store/stored-counts.js';
import { CompactManager, MemorySessionStore, type SessionState, type SessionStore } from '../../src/index.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';
import { jsonFileStore } from '../support/json-file-store.js';
import {
  copy,
  describeQuickCaseInRedis,
  expectQuickLikeWarm,
  freshCalls,
  sent,
} from '../support/quick-resume-cases.js';

/**
 * A window the history is well over: the first call compacts, the next ones do not. The
 * summarizer's and the store's time limits far away: on a loaded CI machine the embedded
 * summary of the 1,200-turn case outlasted the default 30 s, and the session compacted with
 * the "earlier messages were removed" note instead (a fallback this file does not test).
 */
const options = {
  model: 'gpt-4o',
  maxContextTokens: 32_000,
  summarizerTimeoutMs: 600_000,
  storeTimeoutMs: 600_000,
} as const;

const ask = (i: number) => ({ role: 'user', content: `follow-up ${i}: run the tests again` });

/**
 * A manager that compacts the session, then serves three calls (one message appended each)
 * and leaves its records in the store: returned still running, as the warm reference.
 */
async function served(store: SessionStore, turns = 300, arrows = false) {
  const messages: unknown[] = syntheticSession({ turns, seed: 11, toolDensity: 2.5, resultChars: 400 });
  // Asks with an arrow: the summary quotes them (a summary that is not ASCII, as models write).
  if (arrows)
    for (const message of messages as { role: string; content: unknown }[])
      if (message.role === 'user' && typeof message.content === 'string')
        message.content = `Step \u2192 ${message.content}`;
  const manager = new CompactManager({ ...options, store });
  expect((await manager.compact('s', messages)).applied).toBe(true);
  for (let i = 0; i < 3; i++) {
    messages.push(ask(i));
    expect((await manager.compact('s', messages)).applied).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await manager.flush();
  const record = (await store.get(quickKey('s'))) as { quickResume?: QuickRecord } | undefined;
  expect(record?.quickResume?.compacted).toBeDefined();
  expect(record!.quickResume!.length).toBeGreaterThan(messages.length - 8);
  return { manager, messages };
}

/** Two calls after the served history: a fresh manager's on `store`, then the warm `manager`'s (shut down after). */
async function freshAndWarm(store: SessionStore, manager: CompactManager, messages: unknown[]) {
  const first = [...messages, ask(10)];
  const second = [...first, { role: 'assistant', content: 'done' }, ask(11)];
  const fresh = await freshCalls(options, store, first, second);
  const warm = [sent(await manager.compact('s', first)), sent(await manager.compact('s', second))];
  await manager.shutdown();
  return { fresh, warm };
}

async function compactedCase(store: SessionStore, turns = 300, arrows = false) {
  const { manager, messages } = await served(store, turns, arrows);
  return freshAndWarm(store, manager, messages);
}

describe('a fresh manager on a known session that compacted', () => {
  it('answers its first call without indexing the history and sends what a warm manager sends (memory)', async () => {
    const { fresh, warm } = await compactedCase(new MemorySessionStore());
    expect(warm[0]!.version).toBeGreaterThan(0);
    expect(warm[0]!.summary).toBeDefined();
    expectQuickLikeWarm({ fresh, warm });
  });

  it('the same through a file store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quick-compacted-'));
    try {
      const { fresh, warm } = await compactedCase(jsonFileStore(dir));
      expectQuickLikeWarm({ fresh, warm });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a rewind, a fork or a changed covered message at a sampled position takes the full path with the same answer', async () => {
    const store = new MemorySessionStore();
    const { manager, messages } = await served(store);
    const { compacted, length } = (
      (await store.get(quickKey('s'))) as unknown as { quickResume: QuickRecord }
    ).quickResume;
    // A covered message: before the layout's first span of the caller's messages after the summary.
    const firstKept = compacted!.packed!.spans.find((from, k) => k % 2 === 0 && from > 10)!;
    const probe = samplePositions(length).find((i) => i > 0 && i < firstKept - 1)!;
    expect(probe).toBeGreaterThan(0);
    const changed = copy(messages) as { role: string; content: unknown }[];
    changed[probe] = { ...changed[probe]!, content: `${JSON.stringify(changed[probe]!.content)} (edited)` };
    const histories = {
      // Back to before the recorded history's end, then on another way.
      rewind: [...messages.slice(0, length - 2), ask(20)],
      fork: [...messages.slice(0, length - 1), ask(21), ...messages.slice(length)],
      covered: [...changed, ask(22)],
    };
    for (const [name, history] of Object.entries(histories)) {
      // The stored session, copied: each history meets it as the served manager left it.
      const own = new MemorySessionStore();
      for (const key of ['s', 's::counts', quickKey('s')]) {
        const value = await store.get(key);
        if (value) await own.set(key, copy(value));
      }
      const again = new CompactManager({ ...options, store: own });
      const got = await again.compact('s', copy(history));
      expect(again.cacheStatus().sessions, name).toBe(1);
      await again.shutdown();
      const twin = new MemorySessionStore();
      for (const key of ['s', 's::counts']) await twin.set(key, copy((await store.get(key))!));
      // What a manager that knows the session (its state and counts, no quick record) sends.
      const reference = new CompactManager({ ...options, store: twin });
      const expected = await reference.compact('s', copy(history));
      await reference.shutdown();
      expect(sent(got), name).toEqual(sent(expected));
    }
    await manager.shutdown();
  });

  it('a covered message edited out of the sample is found after the call: the record is dropped', async () => {
    const store = new MemorySessionStore();
    const { manager, messages } = await served(store);
    await manager.shutdown();
    const sampled = new Set(samplePositions(messages.length));
    const edited = copy(messages) as { role: string; content: unknown }[];
    // A user message of the covered part, not sampled; another text of the same length.
    const k = edited.findIndex(
      (m, i) => i > 20 && i < 200 && !sampled.has(i) && m.role === 'user' && typeof m.content === 'string',
    );
    const text = edited[k]!.content as string;
    edited[k] = { ...edited[k]!, content: 'Zq '.repeat(Math.ceil(text.length / 3)).slice(0, text.length) };
    const first = [...edited, ask(10)];
    const fresh = new CompactManager({ ...options, store });
    await fresh.compact('s', copy(first));
    expect(fresh.cacheStatus().sessions).toBe(0);
    await fresh.flush();
    expect(await store.get(quickKey('s'))).toBeUndefined();
    await fresh.shutdown();
  });

  it('a compaction since the record (another process) takes the full path with its answer', async () => {
    const store = new MemorySessionStore();
    const { manager, messages } = await served(store);
    const record = await store.get(quickKey('s'));
    // Another process compacts the session again: the stored state moves on, the record stays.
    const other = new CompactManager({ ...options, store });
    expect((await other.compact('s', copy(messages), { force: true })).applied).toBe(true);
    await other.shutdown();
    await store.set(quickKey('s'), record!);
    const first = [...messages, ask(10)];
    const fresh = new CompactManager({ ...options, store });
    const got = sent(await fresh.compact('s', copy(first)));
    expect(fresh.cacheStatus().sessions).toBe(1);
    await fresh.shutdown();
    const twin = new MemorySessionStore();
    for (const key of ['s', 's::counts']) await twin.set(key, copy((await store.get(key))!));
    const reference = new CompactManager({ ...options, store: twin });
    const expected = sent(await reference.compact('s', copy(first)));
    await reference.shutdown();
    expect(got).toEqual(expected);
    expect(got.version).toBeGreaterThan(1);
    await manager.shutdown();
  });
});

/** A layout as the version before the packed form wrote it: parts (runs split at the summary and at a rewrite). */
function asParts(packed: PackedLayout): NonNullable<CompactedLayout['parts']> {
  const parts: NonNullable<CompactedLayout['parts']> = [];
  let k = 0;
  for (let s = 0; s < packed.spans.length; s += 2) {
    let split = true;
    for (let i = packed.spans[s]!; i < packed.spans[s + 1]!; i++) {
      const last = parts.at(-1);
      if (packed.at[k] === i) parts.push({ wire: packed.wires[k++] });
      else if (!split && Array.isArray(last) && last[1] === i) last[1] = i + 1;
      else parts.push([i, i + 1]);
      split = packed.at[k - 1] === i;
    }
  }
  return parts;
}

/** {@link compactedCase} with the quick record changed before the fresh manager reads it. */
async function changedRecordCase(change: (layout: CompactedLayout) => CompactedLayout) {
  const store = new MemorySessionStore();
  const { manager, messages } = await served(store);
  const record = (await store.get(quickKey('s'))) as unknown as { quickResume: QuickRecord };
  const layout = record.quickResume.compacted!;
  // Written packed, without parts: a version that reads parts only drops it (full path).
  expect(layout.parts).toBeUndefined();
  expect(layout.packed!.at.length).toBeGreaterThan(10);
  const changed = { ...record, quickResume: { ...record.quickResume, compacted: change(copy(layout)) } };
  await store.set(quickKey('s'), changed as unknown as SessionState);
  return freshAndWarm(store, manager, messages);
}

describe('the stored forms of a compacted layout', () => {
  it('a record written as parts (before the packed form) answers the first call as a warm manager does', async () => {
    const { fresh, warm } = await changedRecordCase(({ packed, ...rest }) => ({
      ...rest,
      parts: asParts(packed!),
    }));
    expectQuickLikeWarm({ fresh, warm });
  });

  it('a record with parts and a stale packed form beside them is read by its parts', async () => {
    const { fresh, warm } = await changedRecordCase((layout) => ({
      ...layout,
      parts: asParts(layout.packed!),
      packed: {
        ...layout.packed!,
        wires: layout.packed!.wires.map(() => ({ role: 'tool', content: 'stale' })),
      },
    }));
    expectQuickLikeWarm({ fresh, warm });
  });

  it('a packed layout that does not read as the request takes the full path with the same answer', async () => {
    const { fresh, warm } = await changedRecordCase((layout) => ({
      ...layout,
      packed: { ...layout.packed!, at: layout.packed!.at.map((i) => i + 0.5) },
    }));
    expect(fresh.indexed).toBe(true);
    expect(fresh.first).toEqual(warm[0]);
    expect(fresh.second).toEqual(warm[1]);
  });
});

describeQuickCaseInRedis('quick resume of a compacted session', compactedCase, { skipsReads: true });
// A state of over 2,048 ids (isLargeState): read at a revision, it is frozen after the first
// call, in slices, and held for the later reads only then (read-revisions.ts).
describeQuickCaseInRedis(
  'quick resume of a compacted session with a large state',
  async (store) => {
    const found = await compactedCase(store, 1_200, true);
    // As the manager reads it: its lists are stored packed (packed-state.ts).
    const stored = (await store.get('s'))!;
    const state = unpackState(stored);
    expect(state.coveredIds.length + (state.keptIds?.length ?? 0)).toBeGreaterThan(2_048);
    // Its summary's arrows written as escapes (ascii-summary.ts): the stored JSON is ASCII.
    expect(state.summary!.text).toMatch(/[^\x00-\x7f]/);
    expect(JSON.stringify(stored)).toMatch(/^[\x00-\x7f]*$/);
    return found;
  },
  { skipsReads: true },
);
