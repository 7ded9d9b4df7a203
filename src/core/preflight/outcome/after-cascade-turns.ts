/**
 * Turns of the event loop between the O(view) steps after a long compaction's cascade (the
 * state, its write, the result, its guard, the view left behind), for run-preflight.ts.
 */
import { nextTurn, runSteps, runStepsYielding, type Steps } from '../../time-slice.js';
import type { CascadeResult } from '../run-cascade.js';

/**
 * From this many entries in the compacted view and messages folded (the covered ids grow by
 * them: a summary of a long first call leaves a short view), the steps after the cascade (the state, its
 * write, the result, its guard, the view left behind: each O(view)) run in turns of the event
 * loop of their own rather than in one block (issue 47 point 2: a 20k-message compaction held
 * the loop 180 ms after its sliced cascade).
 */
const TURNS_BETWEEN_STEPS_FROM = 4_096;

/** True when the O(view) steps after the cascade of `cascade` run in turns of the loop. */
const sliced = (cascade: CascadeResult) =>
  cascade.entries.length + cascade.folded.length >= TURNS_BETWEEN_STEPS_FROM;

/** A turn of the loop between two O(view) steps of a long compaction. */
export const between = (cascade: CascadeResult) => (sliced(cascade) ? nextTurn() : undefined);

/** `steps` run in slices after a long compaction, at once after a short one. */
export const inSteps = <T>(cascade: CascadeResult, steps: Steps<T>): T | Promise<T> =>
  sliced(cascade) ? runStepsYielding(steps) : runSteps(steps);
