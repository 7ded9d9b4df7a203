/**
 * How many repetitions the soak and property tests run. `npm test` (and CI) runs them at a
 * size that fits a slow two-core machine; `npm run test:full` (COMPACT_TEST_FULL=1) runs the
 * full counts. Mostly repetition counts scale; where a single run takes minutes here (the
 * long-session view run, the session three times the window) its length scales too. Every run
 * asserts the same invariants.
 */
export const FULL_SCALE: boolean = process.env.COMPACT_TEST_FULL === '1';

/** `full` under `npm run test:full`, else `quick`. */
export function scaled(full: number, quick: number): number {
  return FULL_SCALE ? full : quick;
}
