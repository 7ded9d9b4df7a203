/**
 * The caller's copy of an assembled request, made ahead for long views.
 *
 * Every call returns a fresh array the caller owns and may mutate. Past 16,384 elements V8
 * allocates such an array in its large-object space: fresh memory, page-faulted in on first
 * touch, whatever the copying strategy (slice, loop, spread). That made a warm appended call
 * O(n) past 16k messages (about 3 ms at 100k, 150x the 1k figure). So for long views the copy
 * for the next call is made after this one, in a turn of the event loop of its own (while the
 * agent waits on its model), with spare capacity: the next call only pushes what is new. The
 * total work is the same; it is off the call's critical path.
 *
 * The spare copy stays valid because the cache's `wires` only ever grows by push (a rebuilt
 * view gets a new cache object, and the spare goes with the old one).
 */
import type { AssembledCache } from '../view/session-view.js';

/** Views from this length get their next copy made ahead (V8's large-object threshold). */
export const COPY_AHEAD_FROM = 16_384;

/** Messages a spare copy can take before its store must grow (an O(n) copy on the call). */
const ROOM: readonly undefined[] = new Array(256).fill(undefined);

interface CopyAhead {
  spare?: unknown[] | undefined;
  pending?: boolean;
}

const ahead = new WeakMap<AssembledCache, CopyAhead>();

/** A fresh array holding `cache.wires`, for the caller to own. */
export function resultCopy(cache: AssembledCache): unknown[] {
  const wires = cache.wires;
  if (wires.length < COPY_AHEAD_FROM) return wires.slice();
  let state = ahead.get(cache);
  if (state === undefined) {
    state = {};
    ahead.set(cache, state);
  }
  const spare = state.spare;
  state.spare = undefined;
  let out: unknown[];
  if (spare !== undefined && spare.length <= wires.length) {
    for (let k = spare.length; k < wires.length; k++) spare.push(wires[k]);
    out = spare;
  } else out = wires.slice();
  copyAhead(cache, state);
  return out;
}

/** Starts the copy for the first call that answers from `cache` (a compaction's request). */
export function copyAheadOf(cache: AssembledCache): void {
  if (cache.wires.length < COPY_AHEAD_FROM) return;
  const state: CopyAhead = {};
  ahead.set(cache, state);
  copyAhead(cache, state);
}

/** Makes the next call's copy in a later turn of the loop, with room to grow. */
function copyAhead(cache: AssembledCache, state: CopyAhead): void {
  if (state.pending) return;
  state.pending = true;
  const timer = setImmediate(() => {
    state.pending = false;
    const length = cache.wires.length;
    // Room for the next calls' new messages in the same allocation: V8 keeps the store when
    // the length shrinks by less than half.
    const copy = cache.wires.concat(ROOM);
    copy.length = length;
    state.spare = copy;
  });
  timer.unref?.();
}
