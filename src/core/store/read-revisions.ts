/**
 * A store's read that skips what this process already read and checked: the store's revision
 * of the state this process last read and checked, per key, with that state (frozen). While
 * the store reports the same revision, and this process holds that very copy (it set no other
 * since), the read answers it without reading and checking it again
 * (`SessionStore.getIfChanged`).
 */

import { deepFreezeSteps, isLargeState } from '../session/json-copy.js';
import type { SessionState } from '../session/session-state.js';
import { deepFreeze, type SessionStore } from '../session/session-store.js';
import { runStepsYielding, TimeSlice } from '../time-slice.js';

/** A read of a session's state: `checked` when it is the copy read and checked before. */
export interface RevisedRead {
  state: SessionState | undefined;
  revision?: string;
  checked: boolean;
}

/** The revisions of the states this process read and checked, per key (see the file comment). */
export class ReadRevisions {
  readonly #known = new Map<string, Known>();
  /** Large states being frozen after the read that served them (see {@link keep}). */
  readonly #freezing = new Map<string, Known>();

  /**
   * The store's state of a session through `call` (the caller's budget and fault handling);
   * `local` is the copy this process holds now.
   */
  async read(
    inner: SessionStore,
    sessionId: string,
    local: SessionState | null | undefined,
    call: <T>(run: () => Promise<T>) => Promise<T>,
  ): Promise<RevisedRead> {
    if (!inner.getIfChanged) return { state: await call(() => inner.get(sessionId)), checked: false };
    const known = this.#known.get(sessionId);
    const held = known !== undefined && local === known.state ? known : undefined;
    const answer = await call(() => inner.getIfChanged!(sessionId, held?.revision));
    if (answer.unchanged === true) {
      if (held && answer.revision === held.revision)
        return { state: held.state, revision: held.revision, checked: true };
      // Unchanged from a revision this process does not hold: read it whole.
      return { state: await call(() => inner.get(sessionId)), checked: false };
    }
    return { state: answer.state, revision: answer.revision, checked: false };
  }

  /** Remembers the state served after `read`, when it is the store's own answer (frozen). */
  keep(sessionId: string, read: RevisedRead, served: SessionState | undefined): void {
    this.#known.delete(sessionId);
    this.#freezing.delete(sessionId);
    // Kept only for the store's own answer (not a copy written back, nor a floor).
    if (served === undefined || read.revision === undefined || served !== read.state) return;
    const known = { revision: read.revision, state: served };
    if (!isLargeState(served)) {
      deepFreeze(served);
      this.#known.set(sessionId, known);
      return;
    }
    // A long session's state (thousands of ids and rewrites): frozen in slices after the call
    // that read it, not on its path (a fresh process's first call). Until then a read of the
    // session reads it whole, as one without a revision does.
    this.#freezing.set(sessionId, known);
    void freezeLater(served).then(() => {
      if (this.#freezing.get(sessionId) !== known) return;
      this.#freezing.delete(sessionId);
      this.#known.set(sessionId, known);
    });
  }

  forget(sessionId: string): void {
    this.#known.delete(sessionId);
    this.#freezing.delete(sessionId);
  }
}

type Known = { revision: string; state: SessionState };

/** Freezes `state` (as `deepFreeze`) in slices, from the next turn of the loop. */
async function freezeLater(state: SessionState): Promise<void> {
  const slice = new TimeSlice();
  await slice.pause();
  await runStepsYielding(deepFreezeSteps(state), slice);
}
