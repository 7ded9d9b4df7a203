import { describe, expect, it } from 'vitest';
import { novelGain, selectUnits, weakestUnits } from './select-units.js';
import type { Unit } from './types.js';

let order = 0;
const unit = (words: string[], value: number, tokens: number): Unit & { tokens: number } => ({
  text: words.join(' '),
  speaker: 'user',
  source: 'user',
  segment: 0,
  order: order++,
  words,
  value,
  tokens,
});

describe('selection', () => {
  const idf = new Map([
    ['a', 1],
    ['b', 1],
    ['c', 1],
    ['d', 1],
  ]);
  const cost = (u: Unit) => (u as Unit & { tokens: number }).tokens;

  it('greedy by value per token within the budget', () => {
    const units = [unit(['a'], 10, 10), unit(['b'], 6, 2), unit(['c'], 5, 5), unit(['d'], 1, 1)];
    const chosen = selectUnits(units, { budget: 8, cost, idf });
    expect(chosen[0]!.text).toBe('b');
    expect(chosen.map((u) => u.text).sort()).toEqual(['b', 'c', 'd']);
    expect(chosen.reduce((n, u) => n + cost(u), 0)).toBeLessThanOrEqual(8);
  });

  it('discounts words the summary already holds (a near-duplicate loses to a novel unit)', () => {
    const first = unit(['a', 'b'], 10, 5);
    const duplicate = unit(['a', 'b'], 9, 5);
    const novel = unit(['c', 'd'], 7, 5);
    expect(novelGain(duplicate, new Set(['a', 'b']), idf)).toBeCloseTo(9 * 0.4);
    const chosen = selectUnits([first, duplicate, novel], { budget: 10, cost, idf });
    expect(chosen).toEqual([first, novel]);
  });

  it('tops up on a second call, skipping units already chosen; units worth nothing are never chosen', () => {
    const units = [unit(['a'], 5, 4), unit(['b'], 4, 4), unit(['c'], 0, 1)];
    const first = selectUnits(units, { budget: 4, cost, idf });
    const more = selectUnits(units, { budget: 4, cost, idf, chosen: new Set(first) });
    expect([...first, ...more].map((u) => u.text)).toEqual(['a', 'b']);
  });

  it('drops the weakest by value per token until enough tokens are freed', () => {
    const units = [unit(['a'], 10, 2), unit(['b'], 1, 3), unit(['c'], 2, 3)];
    expect(weakestUnits(units, 4, cost).map((u) => u.text)).toEqual(['b', 'c']);
    expect(weakestUnits(units, 0, cost)).toEqual([]);
  });
});
