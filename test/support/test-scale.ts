/**
 * How many repetitions the soak and property tests run. `npm test` (and CI) runs them at a
 * size that fits a slow two-core machine; `npm run test:full` (COMPACT_TEST_FULL=1) runs the
 * full counts. Only repetition counts scale: every session keeps its length and shape (a
 * 300-call session stays 300 calls) and every run asserts the same invariants.
 */
export const FULL_SCALE: boolean = process.env.COMPACT_TEST_FULL === '1';

/** `full` under `npm run test:full`, else `quick`. */
export function scaled(full: number, quick: number): number {
  return FULL_SCALE ? full : quick;
}
