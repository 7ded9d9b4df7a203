/**
 * Issue 47 point 2: the per-message lists of a long cold call are not grown whole by `push`
 * (an array of 300k elements grows by copying itself in one push, 13-30 ms each on a loaded
 * machine, and columns pushed in step grow at the same message). Counted, not timed: the
 * arrays that a `push` took past {@link CHUNK} elements while the step ran.
 */
import { describe, expect, it } from 'vitest';
import { CHUNK } from '../../src/core/chunked-list.js';
import { tokenCounterFor } from '../../src/core/counting/token-counter.js';
import { IdentifierLedger } from '../../src/core/language/key-identifiers.js';
import { codecFor } from '../../src/core/messages/formats/detect-format.js';
import { entryTokens, MessageIndex } from '../../src/core/messages/message-index.js';
import { buildUnits } from '../../src/core/preflight/cascade/build-units.js';
import { splitFolded } from '../../src/core/preflight/cascade/plan-summary.js';
import { IndexedHistory } from '../../src/core/preflight/index/index-request.js';
import { PersistedCounts } from '../../src/core/preflight/index/persist-counts.js';
import { assemble } from '../../src/core/preflight/outcome/assemble.js';
import type { ViewEntry } from '../../src/core/preflight/view/session-view.js';
import { jsonCopySteps } from '../../src/core/session/json-copy.js';
import { MemorySessionStore } from '../../src/core/session/session-store.js';
import { decodeStoredCounts, readStoredCounts } from '../../src/core/store/stored-counts.js';
import { mapSliced, runSteps, TimeSlice } from '../../src/core/time-slice.js';
import { arraysPushedPast, largestMapDuring } from '../support/grown-arrays.js';

const COUNT = 3 * CHUNK;

/** View entries of `n` plain user messages, every tenth pinned (only what the steps read). */
function entries(n: number): ViewEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    item: {
      id: `m${i}`,
      index: i,
      entry: { parsed: { role: 'user', toolCalls: [], toolResults: [] } },
    },
    pinned: i % 10 === 0,
    round: -1,
    tokens: 3 + (i % 7),
  })) as unknown as ViewEntry[];
}

describe('per-message lists of a long call', () => {
  it('an index update pushes no array past a chunk: its items and the columns beside them are chunked', async () => {
    const messages = Array.from({ length: COUNT }, (_, i) => ({ role: 'user', content: `hi ${i}` }));
    const codec = codecFor(messages, undefined);
    const indexed = new IndexedHistory();
    // The largest typed array made meanwhile (the chain's lanes, the pairer's columns).
    let largestTyped = 0;
    const typed = { Int32Array: globalThis.Int32Array, Uint32Array: globalThis.Uint32Array };
    for (const [name, Base] of Object.entries(typed) as [string, Int32ArrayConstructor][])
      (globalThis as Record<string, unknown>)[name] = class extends Base {
        constructor(...args: unknown[]) {
          super(...(args as [number]));
          largestTyped = Math.max(largestTyped, this.length);
        }
      };
    let grown = 0;
    try {
      grown = await arraysPushedPast(CHUNK, () => indexed.update(messages, codec, new MessageIndex()));
    } finally {
      Object.assign(globalThis, typed);
    }
    expect(largestTyped).toBeLessThanOrEqual(CHUNK);
    expect(grown).toBe(0);
    expect(indexed.length).toBe(COUNT);
    expect(indexed.raws.largestChunk).toBeLessThanOrEqual(CHUNK);
    expect(Array.from(indexed.items, (item) => item.index)).toEqual(messages.map((_, i) => i));
    expect(new Set(Array.from(indexed.items, (item) => item.id)).size).toBe(COUNT);
    // The rounds are a column in chunks (no array of 300k grown by copies, no typed array
    // doubled whole): user messages are in no round.
    const rounds = indexed.pairer.round;
    expect(rounds).toHaveLength(COUNT);
    expect(Array.from({ length: COUNT }, (_, i) => rounds.at(i)).every((r) => r === -1)).toBe(true);
    expect(rounds.at(COUNT)).toBeUndefined();
    // The same index as before: a second call with the same array finds nothing changed.
    expect(indexed.update(messages, codec, new MessageIndex())).toBe(COUNT);
    expect(indexed.raws.at(COUNT - 1)).toBe(messages[COUNT - 1]);
  });

  it('units, the folded split and a sliced map push no array past a chunk, and give what the plain loops give', async () => {
    const view = entries(COUNT);
    let units: ReturnType<typeof buildUnits> = [];
    let split: Awaited<ReturnType<typeof splitFolded>> | undefined;
    let mapped: string[] = [];
    const plan = { foldBefore: COUNT - 50, keep: new Set([5, 7]) };
    const grown = await arraysPushedPast(CHUNK, async () => {
      units = buildUnits(view);
      split = await splitFolded(view, plan, new TimeSlice());
      mapped = await mapSliced(view, (entry) => entry.item.id, new TimeSlice());
    });
    expect(grown).toBe(0);
    expect(units).toHaveLength(COUNT);
    expect(units.map((unit) => unit.start)).toEqual(view.map((_, k) => k));
    expect(units.every((unit) => unit.startsTurn && !unit.tool)).toBe(true);
    const folded = view.filter((entry, k) => !entry.pinned && k < plan.foldBefore && !plan.keep.has(k));
    expect(split!.folded).toEqual(folded);
    expect(split!.foldedItems).toEqual(folded.map((entry) => entry.item));
    expect(split!.foldedTokens).toBe(folded.reduce((sum, entry) => sum + entry.tokens, 0));
    expect(split!.kept).toHaveLength(COUNT - folded.length);
    expect(split!.kept.filter((entry) => entry.userText).map((entry) => entry.item.index)).toEqual([5, 7]);
    expect(mapped).toEqual(view.map((entry) => entry.item.id));
  });

  it("the request's messages and a state's copy push no array past a chunk, and give what they gave", async () => {
    const view = entries(COUNT).map((entry) => ({ ...entry, pinned: false }));
    const ids = view.map((entry) => entry.item.id);
    let sent: string[] = [];
    let copy: { coveredIds: string[] } | undefined;
    const grown = await arraysPushedPast(CHUNK, () => {
      sent = assemble(view, 'summary', 'openai-chat', (entry) => entry.item.id);
      copy = runSteps(jsonCopySteps({ coveredIds: ids }));
    });
    expect(grown).toBe(0);
    expect(sent).toEqual(['summary', ...ids]);
    expect(copy).toEqual({ coveredIds: ids });
    expect(copy!.coveredIds).not.toBe(ids);
  });

  it("the summary's identifier ledger grows no Map or array whole, and ranks as before", async () => {
    const ledger = new IdentifierLedger();
    let ranked: string[] = [];
    let grown = 0;
    const largestMap = await largestMapDuring(async () => {
      grown = await arraysPushedPast(CHUNK, () => {
        for (let i = 0; i < COUNT; i++) ledger.add(`ID_${i}`, i % 3 === 0 ? 'user' : 'assistant');
        ledger.add('ID_1', 'user');
        ranked = ledger.ranked();
      });
    });
    expect(grown).toBe(0);
    expect(largestMap).toBeLessThan(CHUNK);
    // User ids first (ID_1 raised to user keeps its place of first naming), most recently named
    // first; then the assistant's.
    const user = [0, 1, ...Array.from({ length: COUNT / 3 - 1 }, (_, k) => 3 * k + 3)].map((i) => `ID_${i}`);
    const assistant = Array.from({ length: COUNT }, (_, i) => i).filter((i) => i % 3 !== 0 && i !== 1);
    expect(ranked).toEqual([...user.reverse(), ...assistant.reverse().map((i) => `ID_${i}`)]);
  });
});

describe("a long history's persisted counts", () => {
  it('are joined 256 at a time, never in one string of the whole history made at once, and read back the same', async () => {
    const messages = Array.from({ length: COUNT }, (_, i) => ({ role: 'user', content: `hi ${i}` }));
    const indexed = new IndexedHistory();
    indexed.update(messages, codecFor(messages, undefined), new MessageIndex());
    const counter = tokenCounterFor('gpt-4o');
    for (const item of indexed.items) entryTokens(item, counter);
    const store = new MemorySessionStore();
    const persisted = new PersistedCounts(store, counter, 'gpt-4o');
    const join = Array.prototype.join;
    // The longest string a `join` made, in characters.
    let longest = 0;
    Array.prototype.join = function (this: unknown[], separator?: string) {
      const joined = join.call(this, separator);
      longest = Math.max(longest, joined.length);
      return joined;
    };
    try {
      persisted.schedule('s', indexed);
      await persisted.settled();
    } finally {
      Array.prototype.join = join;
    }
    const stored = await readStoredCounts(store, 's', persisted.scope(indexed.format!));
    // 96 pieces of 256 messages: none joined with another in one call.
    expect(longest).toBeLessThanOrEqual(stored!.hashes.length / 64);
    const read = new Map<string, number>();
    expect(runSteps(decodeStoredCounts(stored!, read))).toBe(true);
    const expected = new Map(
      Array.from(indexed.items, (item) => [item.entry.hash, entryTokens(item, counter)]),
    );
    expect(read).toEqual(expected);
  });
});
