/**
 * Issue 47 point 1: a long session's state is written to a store outside the process with its
 * lists packed (a few counted strings), read back unpacked, its lists read on first use.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { stampOf } from '../preflight/quick/quick-compacted.js';
import { FailOpenStore } from '../store/fail-open-store.js';
import { runStepsYielding } from '../time-slice.js';
import { deepFreezeSteps, isLargeState } from './json-copy.js';
import { listLength, PACK_FROM, packedShapesOf, packState, unpackState } from './packed-state.js';
import type { SessionRewrite, SessionState } from './session-state.js';
import { deepFreeze, MemorySessionStore, type SessionStore } from './session-store.js';
import { storedStateProblem } from './session-store-checks.js';
import { stateBytes } from './state-bytes.js';

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`);

function longState(covered = 3_000): SessionState {
  const entries: [string, SessionRewrite][] = [];
  for (let i = 0; i < 200; i++)
    entries.push([
      `result:call_${i}`,
      i % 3 === 0
        ? { kind: 'cleared', ref: `tool-${i}`, hash: `h${i}` }
        : i % 3 === 1
          ? { kind: 'shortened', ref: `args-${i}`, keepChars: 40 + i, hash: `h${i}` }
          : { kind: 'cut', ref: `cut-${i}`, keepChars: i, unarchived: i % 2 === 0 },
    ]);
  // An own field named `__proto__`, as JSON.parse makes one.
  entries.push(['__proto__', { kind: 'cleared', ref: 'tool-proto' }]);
  const rewrites: Record<string, SessionRewrite> = Object.fromEntries(entries);
  return {
    sessionId: 's',
    version: 3,
    summary: { text: 'the summary', tokens: 4, summarizer: 'none', createdAt: 5 },
    coveredIds: ids('h', covered),
    pinnedIds: ['h:system'],
    keptIds: ids('k', 900),
    pace: { trough: 1234 },
    userTextIds: ids('u', 70),
    rewrites: JSON.parse(JSON.stringify(rewrites)),
    anchor: { length: covered + 70, chain: 'abc' },
    branches: [{ sessionId: 's', version: 2, coveredIds: ids('b', 500), keptIds: ['x'], updatedAt: 3 }],
    updatedAt: 7,
  };
}

/** Values a JSON parser makes for `value` (array entries and object fields, nested). */
function jsonValues(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 1;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce((sum: number, child) => sum + jsonValues(child), 0);
}

/** A store outside the process: its states go through JSON, as a database's would. */
function jsonStore(): SessionStore & { raw(key: string): unknown } {
  const inner = new MemorySessionStore();
  const texts = new Map<string, string>();
  return {
    name: 'json',
    raw: (key) => JSON.parse(texts.get(key) ?? 'null'),
    async get(key) {
      const text = texts.get(key);
      return text === undefined ? undefined : JSON.parse(text);
    },
    async set(key, state, options) {
      const done = await inner.set(key, state, options);
      if (done) texts.set(key, JSON.stringify(state));
      return done;
    },
    async delete(key) {
      texts.delete(key);
      await inner.delete(key);
    },
    acquireLock: (key, ttl) => inner.acquireLock(key, ttl),
  };
}

describe('a long state as stored', () => {
  it('holds its lists as a few strings and reads back as it was written', () => {
    const state = longState();
    const stored = JSON.parse(JSON.stringify(packState(state)));
    expect(jsonValues(stored)).toBeLessThan(80);
    expect(jsonValues(state)).toBeGreaterThan(5_000);
    expect(stored.coveredIds).toEqual([]);
    expect(storedStateProblem(stored)).toBeUndefined();
    const read = unpackState(stored);
    expect(storedStateProblem(read)).toBeUndefined();
    expect(read).toEqual(state);
    expect(JSON.stringify(read)).toBe(JSON.stringify(state));
    expect(Object.hasOwn(read.rewrites!, '__proto__')).toBe(true);
    // A short list is written as it is.
    expect(stored.pinnedIds).toEqual(['h:system']);
    expect(stored.branches[0].keptIds).toEqual(['x']);
  });

  it('takes a filled list over a packed one carried along by a writer that does not pack', () => {
    const state = longState();
    const stored = JSON.parse(JSON.stringify(packState(state)));
    // An earlier version read this state (its lists empty to it), compacted further and wrote
    // its own lists, spreading what it read: the `packed` field came along unchanged.
    const newer = { ...stored, coveredIds: ids('n', 3_100), keptIds: ids('m', 10), version: 4 };
    const read = unpackState(newer);
    expect(read.coveredIds).toEqual(ids('n', 3_100));
    expect(read.keptIds).toEqual(ids('m', 10));
    expect(listLength(read, 'coveredIds')).toBe(3_100);
    // A list it left empty is still read from the packed form.
    expect(read.userTextIds).toEqual(state.userTextIds);
    expect(read.rewrites).toEqual(state.rewrites);
  });

  it('counts, stamps and checks its lists without reading them', () => {
    const state = longState();
    const read = unpackState(JSON.parse(JSON.stringify(packState(state))));
    // What a quick first call does with the state it read: no list is split.
    const split = vi.spyOn(String.prototype, 'split');
    try {
      expect(storedStateProblem(read)).toBeUndefined();
      expect(stampOf(read)).toBe(stampOf(state));
      expect(isLargeState(read)).toBe(true);
      expect(stateBytes(read)).toBeGreaterThan(3_000 * 6);
      expect(split).not.toHaveBeenCalled();
    } finally {
      split.mockRestore();
    }
    expect(packedShapesOf(read)?.coveredIds?.count).toBe(3_000);
    expect(listLength(read, 'coveredIds')).toBe(3_000);
    expect(listLength(read, 'keptIds')).toBe(900);
    expect(stampOf(read)).toBe(stampOf(state));
    expect(isLargeState(read)).toBe(isLargeState(state));
    expect(isLargeState(unpackState(JSON.parse(JSON.stringify(packState(longState(64))))))).toBe(false);
  });

  it('is deep-frozen without reading its lists; a list read after is frozen too', async () => {
    // A store's answer held for later reads is frozen (read-revisions.ts): after a fresh
    // process's first call, in slices, which split every list (16,000 ids and 1,761 rewrites
    // in bench/cold-process.ts) while the call still waited for its quick record.
    const state = longState();
    const frozen = unpackState(JSON.parse(JSON.stringify(packState(state))));
    const stepped = unpackState(JSON.parse(JSON.stringify(packState(state))));
    const keptBefore = frozen.keptIds;
    const split = vi.spyOn(String.prototype, 'split');
    try {
      deepFreeze(frozen);
      await runStepsYielding(deepFreezeSteps(stepped));
      expect(split).not.toHaveBeenCalled();
    } finally {
      split.mockRestore();
    }
    for (const read of [frozen, stepped]) {
      expect(Object.isFrozen(read)).toBe(true);
      expect(Object.isFrozen(read.coveredIds)).toBe(true);
      expect(Object.isFrozen(read.rewrites)).toBe(true);
      expect(Object.values(read.rewrites!).every((rewrite) => Object.isFrozen(rewrite))).toBe(true);
      expect(Object.isFrozen(read.branches![0]!.coveredIds)).toBe(true);
      expect(JSON.parse(JSON.stringify(read))).toEqual(JSON.parse(JSON.stringify(state)));
    }
    // A list read before the freeze is frozen with the state.
    expect(Object.isFrozen(keptBefore)).toBe(true);
  });

  it('leaves a list it cannot pack as it is', () => {
    const state = longState(PACK_FROM);
    state.keptIds![3] = 'an id with spaces';
    state.rewrites!['result:call_1'] = { kind: 'cleared', ref: 'tool\t1' };
    const stored = JSON.parse(JSON.stringify(packState(state)));
    expect(stored.keptIds).toHaveLength(900);
    expect(Object.keys(stored.rewrites)).toHaveLength(201);
    expect(stored.coveredIds).toEqual([]);
    expect(unpackState(stored)).toEqual(state);
    // Below PACK_FROM entries nothing is packed: the state is written as it is.
    const short: SessionState = { sessionId: 's', version: 1, coveredIds: ids('h', 10), updatedAt: 1 };
    expect(packState(short)).toBe(short);
  });

  it('rejects a malformed packed form, of the state or of a branch', () => {
    const stored = JSON.parse(JSON.stringify(packState(longState())));
    // biome-ignore lint/suspicious/noExplicitAny: each case spoils a field of the parsed JSON by its path
    const cases: [string, (s: Record<string, any>) => void][] = [
      ['not an object', (s) => (s.packed = 'h:1 h:2')],
      ['another version', (s) => (s.packed.v = 2)],
      ['an unknown list', (s) => (s.packed.coveredIdz = { count: 1, text: 'a' })],
      ['a count that is not one', (s) => (s.packed.coveredIds.count = -1)],
      ['a text that is not one', (s) => (s.packed.keptIds.text = ['k:0'])],
      ['a text shorter than its count', (s) => (s.packed.coveredIds.count = 1e6)],
      ['an empty list with a text', (s) => (s.packed.userTextIds = { count: 0, text: 'u:1' })],
      ['a branch', (s) => (s.branches[0].packed.coveredIds = { count: 'x', text: '' })],
    ];
    for (const [name, spoil] of cases) {
      const copy = JSON.parse(JSON.stringify(stored));
      spoil(copy);
      expect(storedStateProblem(copy), name).toBeDefined();
      expect(storedStateProblem(unpackState(copy)), name).toBeDefined();
    }
  });
});

describe('the fail-open store on a store outside the process', () => {
  it('writes a long state packed and reads it back unpacked; an earlier form reads as it is', async () => {
    const inner = jsonStore();
    const store = new FailOpenStore(inner, { timeoutMs: 5_000, onOutage: () => {} });
    const state = longState();
    expect(await store.set('s', state)).toBe(true);
    const raw = inner.raw('s') as SessionState;
    expect(raw.packed?.coveredIds?.count).toBe(3_000);
    expect(JSON.stringify(raw).length).toBeLessThan(JSON.stringify(state).length);
    const fresh = new FailOpenStore(inner, { timeoutMs: 5_000, onOutage: () => {} });
    expect(await fresh.get('s')).toEqual(state);
    // A state written in the earlier form (every list an array).
    await inner.set('old', { ...state, sessionId: 'old' });
    expect(inner.raw('old')).not.toHaveProperty('packed');
    expect(await fresh.get('old')).toEqual({ ...state, sessionId: 'old' });
  });

  it('deletes a malformed packed state and reports it', async () => {
    const inner = jsonStore();
    const corrupt: string[] = [];
    const store = new FailOpenStore(inner, {
      timeoutMs: 5_000,
      onOutage: () => {},
      onCorrupt: (_, message) => {
        corrupt.push(message);
      },
    });
    const stored = JSON.parse(JSON.stringify(packState(longState())));
    stored.packed.keptIds = { count: 900, text: 12 };
    await inner.set('s', stored);
    expect(await store.get('s')).toBeUndefined();
    expect(corrupt).toHaveLength(1);
    expect(corrupt[0]).toContain('packed.keptIds');
    expect(await inner.get('s')).toBeUndefined();
  });
});

describe('the in-process store', () => {
  it('holds a packed state copied into it as lists', async () => {
    const store = new MemorySessionStore();
    const state = longState(300);
    await store.set('s', JSON.parse(JSON.stringify(packState(state))));
    expect(await store.get('s')).toEqual(state);
  });
});

describe('a long state summary with characters that are not ASCII', () => {
  const summaryOf = (text: string) => ({ text, tokens: 9, summarizer: 'embedded', createdAt: 5 });
  const texts = [
    'Fixed auth \u2192 tests pass \u2014 \u201cdone\u201d',
    'C:\\u2192 \\\\ \\u00e9 \u00e9 \ud83c\udf89 \ud800',
  ];

  it('is written in ASCII and reads back as it was', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom(...texts)), (text) => {
        const state = { ...longState(), summary: summaryOf(text) };
        const json = JSON.stringify(packState(state));
        expect(/^[\x00-\x7f]*$/.test(json)).toBe(true);
        const read = unpackState(JSON.parse(json));
        expect(read.summary).toEqual(state.summary);
        expect(stampOf(read)).toBe(stampOf(state));
      }),
      { numRuns: 300 },
    );
  });

  it('is read as written by a writer that does not pack when it no longer matches its mark', () => {
    const state = { ...longState(), summary: summaryOf(texts[0]!) };
    const stored = JSON.parse(JSON.stringify(packState(state))) as SessionState;
    const escaped = stored.summary!.text;
    // That writer carried the summary's fields along and wrote a text of its own.
    const others = [
      { ...stored, summary: { ...stored.summary!, text: 'new \u2192 text' } },
      { ...stored, summary: { ...stored.summary!, text: `${escaped} ` } },
      { ...stored, version: stored.version + 1 },
    ];
    for (const other of others) {
      const read = unpackState(JSON.parse(JSON.stringify(other)));
      expect(read.summary!.text).toBe(other.summary!.text);
      expect(read.summary).not.toHaveProperty('ascii');
    }
    // A state without lists long enough to pack keeps its summary as it is.
    const short = { ...longState(10), keptIds: [], userTextIds: [], rewrites: {}, branches: [] };
    expect(packState({ ...short, summary: summaryOf(texts[0]!) }).summary!.text).toBe(texts[0]);
  });
});
