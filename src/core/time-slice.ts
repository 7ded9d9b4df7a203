/**
 * Work done in slices: a long loop (the first count of a long history, a compaction, the
 * built-in summary, the tokenizer's load) gives the event loop a turn every few milliseconds,
 * so that timers, I/O and other requests of the process run meanwhile. Two forms: a
 * {@link TimeSlice} checked inside an async loop (`if (slice.due()) await slice.pause()`, no
 * await while the work is short), and {@link Steps}, a generator that yields between small
 * pieces of work, run at once ({@link runSteps}) or in slices ({@link runStepsYielding}).
 */

import { ChunkedList } from './chunked-list.js';
import { clock } from './clock.js';

/** Longest stretch of work between two turns of the event loop, in milliseconds. */
export const SLICE_MS = 5;

/**
 * When the current batch of resumed slices began: pieces of sliced work that pause in the
 * same turn resume in the same turn of the loop (one `setImmediate` phase), and share its
 * budget (two jobs of 5 ms each would otherwise hold the loop 10 ms between two turns).
 */
let batchStart = 0;
let markerQueued = false;
/**
 * True from the start of a batch until the next turn of the loop: a slice started within a
 * batch (a step that begins after another's pause resumed, in the same turn) counts from the
 * batch's start too, not from its own (a 20k-message compaction's cascade began a fresh 5 ms
 * after the count's slice had run, in one 23 ms stretch). Cleared in the next check phase, so
 * a slice started in a later turn's timers or I/O may pause once early: harmless.
 */
let inBatch = false;

/** One turn of the event loop (`setImmediate`): timers and I/O that are due run first. */
export function nextTurn(): Promise<void> {
  // Queued before the resumes (setImmediate runs in order): it marks the start of their batch.
  if (!markerQueued) {
    markerQueued = true;
    setImmediate(() => {
      markerQueued = false;
      batchStart = clock.now();
      if (inBatch) return;
      inBatch = true;
      setImmediate(() => {
        inBatch = false;
      });
    });
  }
  return new Promise((resolve) => setImmediate(resolve));
}

/** Options of {@link TimeSlice}. */
export interface TimeSliceOptions {
  /** @default SLICE_MS */
  sliceMs?: number;
  /** Stops at the next pause once aborted (the caller gave up, or a time limit passed). */
  signal?: AbortSignal | undefined;
}

/**
 * The clock of one piece of sliced work, shared by its steps: {@link due} is true once
 * `sliceMs` have passed since the last turn of the loop, {@link pause} gives the loop a turn.
 */
export class TimeSlice {
  readonly #sliceMs: number;
  readonly #signal: AbortSignal | undefined;
  #since: number;
  /** Turns of the loop given so far. */
  pauses = 0;

  constructor(options: TimeSliceOptions = {}) {
    this.#sliceMs = options.sliceMs ?? SLICE_MS;
    this.#signal = options.signal;
    const now = clock.now();
    this.#since = inBatch ? Math.min(now, batchStart) : now;
  }

  /** True when the current slice has run its time (reads the clock: call it per piece of work, not per character). */
  due(): boolean {
    return clock.now() - this.#since >= this.#sliceMs;
  }

  /**
   * Gives the event loop a turn, then starts a new slice; throws the signal's reason once
   * aborted. The new slice counts from the start of the batch of slices resumed in this turn
   * (other sliced work that ran before it in the same turn used part of the budget).
   */
  async pause(): Promise<void> {
    await nextTurn();
    this.pauses++;
    this.#signal?.throwIfAborted();
    this.#since = Math.min(clock.now(), batchStart);
  }
}

/** `items.map(map)`, giving the loop a turn whenever `slice` has run its time. */
export async function mapSliced<T, U>(
  items: readonly T[],
  map: (item: T) => U,
  slice: TimeSlice = new TimeSlice(),
): Promise<U[]> {
  // Gathered in chunks, made one array at its size at the end (a 300k-element array grown by
  // `push` copied itself whole in one push: issue 47).
  const out = new ChunkedList<U>();
  for (const item of items) {
    out.push(map(item));
    if (slice.due()) await slice.pause();
  }
  return out.toArray();
}

/** A computation that yields between small pieces of work and returns `T`. */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to the end without pausing. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Runs `steps`, giving the event loop a turn whenever the slice has run its time (`sliceMs`,
 * or the clock of a {@link TimeSlice} shared with the steps around them): timers, I/O and
 * other requests run while a long summary is computed.
 */
export async function runStepsYielding<T>(
  steps: Steps<T>,
  slice: TimeSlice | number = SLICE_MS,
  signal?: AbortSignal,
): Promise<T> {
  const clock = typeof slice === 'number' ? new TimeSlice({ sliceMs: slice, signal }) : slice;
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (clock.due()) await clock.pause();
  }
}
