import fc from 'fast-check';
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

/**
 * The selection as it was before its heap moved entries with plain stores (issue 47 point 2: a
 * destructuring swap made an array per step, and a re-scored entry was copied): the same
 * choices, in the same order, for any units, costs and budget. An equivalence guard (it passes
 * on the old code too).
 */
function selectUnitsBefore(
  units: readonly Unit[],
  budget: number,
  cost: (unit: Unit) => number,
  idf: ReadonlyMap<string, number>,
): Unit[] {
  type Entry = { unit: Unit; ratio: number; cost: number };
  const items: Entry[] = [];
  const push = (entry: Entry) => {
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.ratio >= items[i]!.ratio) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  };
  const pop = () => {
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < items.length && items[l]!.ratio > items[best]!.ratio) best = l;
        if (r < items.length && items[r]!.ratio > items[best]!.ratio) best = r;
        if (best === i) break;
        [items[best], items[i]] = [items[i]!, items[best]!];
        i = best;
      }
    }
    return top;
  };
  const covered = new Set<string>();
  for (const u of units) {
    if (u.value <= 0) continue;
    const c = Math.max(1, cost(u));
    if (c > budget) continue;
    push({ unit: u, cost: c, ratio: novelGain(u, covered, idf) / c });
  }
  const out: Unit[] = [];
  let used = 0;
  while (items.length > 0) {
    const entry = pop()!;
    if (used + entry.cost > budget) continue;
    const ratio = novelGain(entry.unit, covered, idf) / entry.cost;
    const next = items[0];
    if (next && ratio < next.ratio) {
      if (ratio > 0) push({ ...entry, ratio });
      continue;
    }
    if (ratio <= 0) continue;
    out.push(entry.unit);
    used += entry.cost;
    for (const word of entry.unit.words) covered.add(word);
  }
  return out;
}

describe('selection, equivalent to the former heap', () => {
  it('chooses the same units in the same order', () => {
    const words = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const idf = new Map(words.map((word, i) => [word, 1 + (i % 3)]));
    const cost = (u: Unit) => (u as Unit & { tokens: number }).tokens;
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            words: fc.subarray(words, { maxLength: 4 }),
            value: fc.oneof(fc.constant(0), fc.integer({ min: -2, max: 20 }), fc.constant(5)),
            tokens: fc.integer({ min: 0, max: 12 }),
          }),
          { maxLength: 60 },
        ),
        fc.integer({ min: 0, max: 80 }),
        (specs, budget) => {
          const units = specs.map((spec) => unit(spec.words, spec.value, spec.tokens));
          expect(selectUnits(units, { budget, cost, idf })).toEqual(
            selectUnitsBefore(units, budget, cost, idf),
          );
        },
      ),
      { numRuns: 500, seed: 4_747 },
    );
  });
});
