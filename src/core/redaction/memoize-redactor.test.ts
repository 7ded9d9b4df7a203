/**
 * Issue 47 point 2: a summary of 300k tiny messages remembers one seam join per pair of
 * messages, and `memoizeRedactor`'s single `Map` of them grew in one `set` that held the loop
 * 30-74 ms (a profile of every gap over 20 ms of the 300k tiny path). Counted, not timed: the
 * largest `Map` any `set` makes while 100k distinct texts are remembered.
 */
import { describe, expect, it } from 'vitest';
import { memoizeRedactor } from './redactor.js';

describe('memoizeRedactor', () => {
  it('spreads what it remembers over small maps: no one Map grows past a sixteenth', () => {
    const texts = Array.from({ length: 100_000 }, (_, i) => `a seam: hi ${i}hi ${i + 1}`);
    let largest = 0;
    const set = Map.prototype.set;
    Map.prototype.set = function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
      const out = set.call(this, key, value);
      largest = Math.max(largest, this.size);
      return out;
    };
    let scans = 0;
    const once = memoizeRedactor((text) => {
      scans++;
      return text.replace('seam', '[REDACTED]');
    });
    try {
      for (const text of texts) once(text);
    } finally {
      Map.prototype.set = set;
    }
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThan(texts.length / 16);
    // Same answers, each distinct text scanned once.
    expect(once(texts[7]!)).toBe('a [REDACTED]: hi 7hi 8');
    for (const text of texts.slice(0, 100)) once(text);
    expect(scans).toBe(texts.length);
  });
});
