import { describe, expect, it } from 'vitest';
import type { IndexedEntry } from '../../messages/message-index.js';
import { HashesSeen } from './persist-counts.js';

/** An entry with just the hash lanes (and the hash string they print as). */
const entry = (high: number, low: number) =>
  ({ hashHigh: high | 0, hashLow: low | 0, hash: `${high >>> 0}.${low >>> 0}` }) as unknown as IndexedEntry;

describe('HashesSeen: the hashes a stored-counts write has met, by lanes', () => {
  it('tells hashes apart as a Set of their strings does, keys shared by 30 bits of the low lane included', () => {
    const seen = new HashesSeen();
    const strings = new Set<string>();
    // Same 30-bit key (low lanes differing in their top bits or not at all), other high lanes.
    const lanes: [number, number][] = [
      [1, 5],
      [2, 5],
      [1, 5 | 0x40000000],
      [1, 5 | 0x80000000],
      [3, 5],
      [2, 5],
      [1, 5],
      [1, 5 | 0x80000000],
      [7, 9],
      [7, 9],
      [-1, -1],
      [-1, 0x3fffffff],
      [-1, -1],
    ];
    for (const [high, low] of lanes) {
      const e = entry(high, low);
      const first = !strings.has(e.hash);
      strings.add(e.hash);
      expect(seen.firstSight(e), `${high}, ${low}`).toBe(first);
    }
  });

  it('meets the same entry once', () => {
    const seen = new HashesSeen();
    const e = entry(11, 12);
    expect(seen.firstSight(e)).toBe(true);
    expect(seen.firstSight(e)).toBe(false);
    expect(seen.firstSight(entry(11, 12))).toBe(false);
  });
});
