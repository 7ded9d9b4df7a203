import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../testing/synthetic-session.js';
import { CHUNK } from './chunked-list.js';
import { IntColumn } from './int-column.js';

describe('IntColumn', () => {
  it('reads what was written, 0 where nothing was, across chunk edges, and copies out a prefix', () => {
    const next = random(7);
    const column = new IntColumn();
    const plain = new Map<number, number>();
    for (let step = 0; step < 5_000; step++) {
      const at = Math.floor(next() * 5 * CHUNK);
      const value = Math.floor(next() * 2 ** 32) | 0;
      column.set(at, value);
      plain.set(at, value);
    }
    for (let i = 0; i < 5 * CHUNK + 10; i++) expect(column.get(i)).toBe(plain.get(i) ?? 0);
    const length = 3 * CHUNK + 5;
    expect(Array.from(column.toInt32Array(length))).toEqual(
      Array.from({ length }, (_, i) => plain.get(i) ?? 0),
    );
    expect(column.largestChunk).toBe(CHUNK);
    expect(new IntColumn().toInt32Array(3)).toEqual(new Int32Array(3));
  });
});
