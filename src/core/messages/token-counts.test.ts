import { describe, expect, it } from 'vitest';
import { BpeTokenCounter } from '../counting/token-counter.js';
import { hashString } from './hash-string.js';
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

describe('hashString', () => {
  it('gives the same ids as before it built flat strings (stored states name messages by them)', () => {
    // Values of `high.toString(36) + low.toString(36).padStart(7, '0')`, the former code.
    const cases: [string, number, string][] = [
      ['', 0, 'k4n83c07h0j2b'],
      ['', 7, 'ckg3zv0w3bft5'],
      ['a', 0, 'm8735310ae7sx'],
      ['a', 7, '1j31sms047a1hl'],
      ['hello world', 0, 'n7rb4n1m39uz8'],
      ['hello world', 7, '22hs4a0pb02e2'],
      ['x'.repeat(5000), 0, 'xrd5xs0kap9iq'],
      ['x'.repeat(5000), 7, '1jxu9xe06oc4pv'],
    ];
    for (const [text, seed, hash] of cases) expect(hashString(text, seed)).toBe(hash);
  });

  it('puts a prefix before the same digits', () => {
    for (const [text, seed] of [
      ['', 0],
      ['a', 7],
      ['hello world', 0],
    ] as const)
      expect(hashString(text, seed, 'tool-')).toBe(`tool-${hashString(text, seed)}`);
  });
});
