/**
 * Selection: greedy by value per token, with a novelty discount for words the summary
 * already holds (maximal marginal relevance). Gains only fall as the summary grows, so a
 * lazy heap re-scores a unit only when it reaches the top: O(n log n).
 */
import { runSteps, type Steps } from '../../time-slice.js';
import type { Unit, WordRarities } from './types.js';

/** Share of a unit's value lost when every one of its words is already in the summary. */
export const NOVELTY_DISCOUNT = 0.6;

/** Options of {@link selectUnits}. */
export interface SelectOptions {
  /** Token budget for the newly chosen units (their `cost`s). */
  budget: number;
  /** Estimated tokens of a unit in the rendered summary. */
  cost: (unit: Unit) => number;
  /** Rarity of each content word (from scoring). */
  idf: WordRarities;
  /** Units already in the summary: skipped, and their words count as covered. */
  chosen?: ReadonlySet<Unit>;
}

/** The gain of `unit` given the words already covered. */
export function novelGain(unit: Unit, covered: ReadonlySet<string>, idf: WordRarities): number {
  if (unit.value <= 0) return 0;
  let total = 0;
  let seen = 0;
  for (const word of unit.words) {
    const weight = idf.get(word) ?? 0;
    total += weight;
    if (covered.has(word)) seen += weight;
  }
  const share = total > 0 ? seen / total : 0;
  return unit.value * (1 - NOVELTY_DISCOUNT * share);
}

interface Entry {
  unit: Unit;
  /** Gain per token when last computed (an upper bound of the current one). */
  ratio: number;
  cost: number;
}

/** A max-heap of entries by ratio. */
class Heap {
  readonly #items: Entry[] = [];
  get size(): number {
    return this.#items.length;
  }
  push(entry: Entry): void {
    const items = this.#items;
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = items[parent]!;
      if (above.ratio >= entry.ratio) break;
      // Moved with a plain store, not a destructuring swap: that made an array per step (95 of
      // 970 MB a cold 50k-message compaction allocated, issue 47 point 2).
      items[i] = above;
      i = parent;
    }
    items[i] = entry;
  }
  peek(): Entry | undefined {
    return this.#items[0];
  }
  pop(): Entry | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      // `last` sinks from the root: each larger child moves up a place, `last` is stored once.
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = -1;
        let ratio = last.ratio;
        if (l < items.length && items[l]!.ratio > ratio) {
          best = l;
          ratio = items[l]!.ratio;
        }
        if (r < items.length && items[r]!.ratio > ratio) best = r;
        if (best < 0) break;
        items[i] = items[best]!;
        i = best;
      }
      items[i] = last;
    }
    return top;
  }
}

/**
 * Chooses units greedily by novel gain per token while their costs fit `budget`. Returns
 * the newly chosen units in the order they were chosen (strongest first).
 */
export function selectUnits(units: readonly Unit[], options: SelectOptions): Unit[] {
  return runSteps(selectUnitSteps(units, options));
}

/** {@link selectUnits} as {@link Steps}: a pause every few units. */
export function* selectUnitSteps(units: readonly Unit[], options: SelectOptions): Steps<Unit[]> {
  const { budget, cost, idf } = options;
  const already = options.chosen ?? new Set<Unit>();
  const covered = new Set<string>();
  for (const unit of already) for (const word of unit.words) covered.add(word);
  const heap = new Heap();
  let work = 0;
  for (const unit of units) {
    // Every few units: the first look at a unit counts its tokens.
    if (++work % 8 === 0) yield;
    if (already.has(unit) || unit.value <= 0) continue;
    const c = Math.max(1, cost(unit));
    if (c > budget) continue;
    heap.push({ unit, cost: c, ratio: novelGain(unit, covered, idf) / c });
  }
  const out: Unit[] = [];
  let used = 0;
  while (heap.size > 0) {
    if (++work % 64 === 0) yield;
    const entry = heap.pop()!;
    if (used + entry.cost > budget) continue;
    const ratio = novelGain(entry.unit, covered, idf) / entry.cost;
    const next = heap.peek();
    if (next && ratio < next.ratio) {
      // Stale: its words were covered since; put it back with its current gain.
      if (ratio > 0) {
        // The popped entry itself goes back (nothing else holds it): no copy per re-score.
        entry.ratio = ratio;
        heap.push(entry);
      }
      continue;
    }
    if (ratio <= 0) continue;
    out.push(entry.unit);
    used += entry.cost;
    for (const word of entry.unit.words) covered.add(word);
  }
  return out;
}

/**
 * The units to drop so that at least `excess` tokens are freed: the weakest by value per
 * token first.
 */
export function weakestUnits(chosen: Iterable<Unit>, excess: number, cost: (unit: Unit) => number): Unit[] {
  const ranked = [...chosen].sort((a, b) => a.value / cost(a) - b.value / cost(b) || a.order - b.order);
  const out: Unit[] = [];
  let freed = 0;
  for (const unit of ranked) {
    if (freed >= excess) break;
    out.push(unit);
    freed += cost(unit);
  }
  return out;
}
