/**
 * A message of megabytes is hashed a piece at a time (issue 47 point 2: its hash held the loop
 * ~140 ms in one block): the pieces give the same hashes as the whole text.
 */
import { describe, expect, it } from 'vitest';
import { TimeSlice } from '../time-slice.js';
import { hashJson, hashJsonInSlices } from './hash-json.js';
import { hashLanes, LaneHasher } from './hash-string.js';
import { jsonPieces, LONG_STRING, splitJson } from './json-pieces.js';
import { safeJson } from './safe-json.js';

/** A seeded generator (mulberry32): the same cases on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Characters that JSON escapes or that pair: quotes, controls, lone and paired surrogates, non-ASCII. */
const ALPHABET = [
  'a',
  'z',
  ' ',
  '"',
  '\\',
  '\n',
  '\u0000',
  '\u001f',
  'é',
  '\u2028',
  '\ud83d\ude00',
  '\ud800',
  '\udc00',
];

function text(rand: () => number, length: number): string {
  const out: string[] = [];
  for (let n = 0; n < length; ) {
    const piece = ALPHABET[Math.floor(rand() * ALPHABET.length)]!;
    out.push(piece);
    n += piece.length;
  }
  return out.join('');
}

/** A long string with a surrogate pair across each chunk boundary (64k) of the pieces. */
function pairAcrossChunks(rand: () => number, length: number): string {
  const chars = text(rand, length).split('');
  for (let at = 65_535; at + 1 < chars.length; at += 65_536) {
    chars[at] = '\ud83d';
    chars[at + 1] = '\ude00';
  }
  return chars.join('');
}

describe('hashing in pieces', () => {
  it('LaneHasher over any split of a text gives hashLanes of the whole', () => {
    const rand = random(47);
    for (let round = 0; round < 200; round++) {
      const whole = text(rand, Math.floor(rand() * 400));
      const seed = round % 3;
      const hasher = new LaneHasher(seed);
      for (let at = 0; at < whole.length; ) {
        const end = Math.min(whole.length, at + 1 + Math.floor(rand() * 40));
        hasher.update(whole.slice(at, end));
        at = end;
      }
      const pieces = [...hasher.digest()];
      expect(pieces).toEqual([...hashLanes(whole, seed)]);
    }
  });

  it("the pieces of a message's JSON join into its JSON without meta", () => {
    const rand = random(7);
    for (let round = 0; round < 6; round++) {
      const long = pairAcrossChunks(rand, LONG_STRING * (1 + round) + round);
      const message = {
        role: 'tool',
        tool_call_id: `call_${round}`,
        content: round % 2 ? long : [{ type: 'text', text: long }, { type: 'text', text: 'short "x"' }, null],
        ...(round % 3 === 0 ? { meta: { pinned: true } } : {}),
        extra: [1, undefined, { nested: long.slice(0, LONG_STRING + 3) }],
      };
      const split = splitJson(message);
      expect(split).toBeDefined();
      expect([...jsonPieces(split!)].join('')).toBe(safeJson(message, 0));
    }
  });

  it('leaves messages without a long string, or not plain data, to the whole path', () => {
    const long = 'x'.repeat(LONG_STRING);
    expect(splitJson({ role: 'user', content: 'short' })).toBeUndefined();
    expect(splitJson({ role: 'user', content: long, when: new Date(0) })).toBeUndefined();
    const cyclic: Record<string, unknown> = { role: 'user', content: long };
    cyclic.self = cyclic;
    expect(splitJson(cyclic)).toBeUndefined();
    // The caller's string equal to the placeholder: the split would not match, stringified whole.
    const placeholder = '\u0000\u0001agent-compaction long string\u0001\u0000';
    expect(splitJson({ role: 'user', content: long, note: placeholder })).toBeUndefined();
  });

  it('hashes in slices as at once, with and without meta', async () => {
    const rand = random(11);
    const long = pairAcrossChunks(rand, 3 * LONG_STRING + 5);
    for (const meta of [undefined, { pinned: true, tag: 'é"' }]) {
      const message = { role: 'tool', tool_call_id: 'c', content: long, ...(meta ? { meta } : {}) };
      const sliced = await hashJsonInSlices(message, new TimeSlice({ sliceMs: 0 }));
      expect(sliced).toEqual(hashJson(safeJson(message, 0), meta));
    }
  });

  it('reads each long string first in a turn of its own (a rope is flattened there)', async () => {
    // Ropes, as a caller's concatenation makes them; the clock is never due.
    const first = 'a'.repeat(LONG_STRING) + 'b'.repeat(LONG_STRING);
    const second = `${'c'.repeat(LONG_STRING)}d`;
    const message = { role: 'tool', tool_call_id: 'c', content: first, extra: [second] };
    const slice = new TimeSlice({ sliceMs: Number.POSITIVE_INFINITY });
    const sliced = await hashJsonInSlices(message, slice);
    expect(slice.pauses).toBe(2);
    expect(sliced).toEqual(hashJson(safeJson(message, 0), undefined));
  });
});
