/**
 * Work that can pause: a generator that yields between small pieces (a message, a few dozen
 * units) so that a long summary can give the event loop back every few milliseconds.
 */

/** A computation that yields between small pieces of work and returns `T`. */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to the end without pausing. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Longest stretch of work between two turns of the event loop, in milliseconds. */
export const SLICE_MS = 5;

/**
 * Runs `steps`, giving the event loop a turn (`setImmediate`) whenever `sliceMs` have passed
 * since the last one: timers, I/O and other requests run while a long summary is computed.
 */
export async function runStepsYielding<T>(
  steps: Steps<T>,
  sliceMs = SLICE_MS,
  signal?: AbortSignal,
): Promise<T> {
  let since = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - since >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      // Stops when the caller gave up or a time limit passed (the work is not wasted on).
      signal?.throwIfAborted();
      since = performance.now();
    }
  }
}
