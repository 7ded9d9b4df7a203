/**
 * The built-in summarizer's last fitting step in agent runs: the room the fitting left, filled
 * unit by unit on the rendered count.
 */

import type { Steps } from '../../time-slice.js';
import { selectUnitSteps } from './select-units.js';
import type { Unit, WordRarities } from './types.js';

/**
 * Units tried one by one, each on the rendered count, in the room the fitting left (at most
 * this many). In rolling compaction the next round's room is this summary's size, so what a
 * round leaves unused goes to the verbatim tail for good: without it the summary lost about
 * 12 tokens a round (801 to 587 tokens over 50 rounds of one planted session at 20:1).
 */
export const EXACT_FILL_TRIES = 12;

/** What {@link fillExactSteps} works on: the fitted summary and how it was made. */
export interface ExactFill {
  units: readonly Unit[];
  chosen: Set<Unit>;
  idf: WordRarities;
  maxTokens: number;
  countTokens: (text: string) => number;
  cost: (unit: Unit) => number;
  render: () => string;
  body: string;
  count: number;
}

/**
 * The room the fitting left, filled: the strongest units that fit it, one at a time, each
 * kept only when the rendered summary still fits (a unit's estimated cost misses the line or
 * heading it opens, so the fitting stops short or overshoots and trims a whole unit).
 */
export function* fillExactSteps(fill: ExactFill): Steps<{ body: string; count: number }> {
  const { chosen, idf, maxTokens, countTokens, cost, render } = fill;
  let { units, body, count } = fill;
  for (let tries = 0; tries < EXACT_FILL_TRIES && count < maxTokens; ) {
    const candidates = yield* selectUnitSteps(units, { budget: maxTokens - count, cost, idf, chosen });
    if (candidates.length === 0) break;
    const rejected = new Set<Unit>();
    for (const unit of candidates) {
      if (tries++ >= EXACT_FILL_TRIES) break;
      chosen.add(unit);
      const next = render();
      const nextCount = countTokens(next);
      if (nextCount <= maxTokens) {
        body = next;
        count = nextCount;
      } else {
        chosen.delete(unit);
        rejected.add(unit);
      }
      yield;
    }
    // A unit that did not fit is not offered again; a smaller one may still fit.
    if (rejected.size > 0) units = units.filter((unit) => !rejected.has(unit));
  }
  return { body, count };
}
