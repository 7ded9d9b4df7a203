import { describe, expect, it } from 'vitest';
import { BpeTokenCounter } from '../counting/token-counter.js';
import { TokenCounts } from './message-index.js';

describe('TokenCounts', () => {
  it('keeps a count per counter, for the first two and any later one', () => {
    const [a, b, c] = [1, 1.1, 1.2].map((margin) => new BpeTokenCounter({ encoding: 'o200k_base', margin }));
    if (!a || !b || !c) throw new Error('three counters');
    const counts = new TokenCounts();
    expect(counts.get(a)).toBeUndefined();
    counts.set(a, 10);
    expect([counts.get(a), counts.get(b), counts.get(c)]).toEqual([10, undefined, undefined]);
    counts.set(b, 20);
    counts.set(c, 30);
    counts.set(a, 11);
    counts.set(c, 31);
    expect([counts.get(a), counts.get(b), counts.get(c)]).toEqual([11, 20, 31]);
  });
});
