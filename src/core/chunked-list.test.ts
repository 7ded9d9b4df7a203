import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../testing/synthetic-session.js';
import { CHUNK, ChunkedList } from './chunked-list.js';

describe('ChunkedList', () => {
  it('holds what an array holds under pushes, writes and truncations, in chunks of at most CHUNK', () => {
    for (const seed of [1, 2, 3]) {
      const next = random(seed);
      const list = new ChunkedList<number>();
      const array: number[] = [];
      let longest = 0;
      for (let step = 0; step < 150; step++) {
        const roll = next();
        if (roll < 0.7) {
          const count = Math.floor(next() * CHUNK * 0.25);
          for (let i = 0; i < count; i++) {
            list.push(array.length);
            array.push(array.length);
          }
        } else if (roll < 0.9 && array.length > 0) {
          const at = Math.floor(next() * array.length);
          list.set(at, -at);
          array[at] = -at;
        } else {
          // Mostly a cut within the last chunk or two (across chunk edges), sometimes none.
          const keep = Math.max(0, array.length + 5 - Math.floor(next() * CHUNK * 0.75));
          list.truncate(keep);
          if (keep < array.length) array.length = keep;
        }
        expect(list.length).toBe(array.length);
        longest = Math.max(longest, array.length);
        const probe = Math.floor(next() * (array.length + 2)) - 1;
        expect(list.at(probe)).toBe(array.at(probe));
      }
      expect([...list]).toEqual(array);
      expect(list.toArray()).toEqual(array);
      expect(list.map((value, i) => `${value}@${i}`)).toEqual(array.map((value, i) => `${value}@${i}`));
      expect(list.largestChunk).toBeLessThanOrEqual(CHUNK);
      expect(longest).toBeGreaterThan(4 * CHUNK);
    }
  });

  it('reads undefined outside the list, from the end at a negative position as an array, and refuses a write outside', () => {
    const list = new ChunkedList<string>();
    expect(list.at(0)).toBeUndefined();
    list.push('a');
    expect(list.at(-1)).toBe('a');
    expect(list.at(-2)).toBeUndefined();
    expect(list.at(1)).toBeUndefined();
    expect(() => list.set(1, 'b')).toThrow(RangeError);
    list.truncate(0);
    expect(list.length).toBe(0);
    expect(list.toArray()).toEqual([]);
    list.push('c');
    expect([...list]).toEqual(['c']);
  });

  it('keeps array values as they are (toArray does not flatten them)', () => {
    const list = new ChunkedList<number[]>();
    list.push([1, 2]);
    list.push([]);
    expect(list.toArray()).toEqual([[1, 2], []]);
  });
});
