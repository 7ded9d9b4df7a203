/**
 * A local answer (issue 46): a triggered compaction the store could not grant a version to
 * (it is down, or it kept changing under every reload). The compaction is sent, but claims no
 * version: its summary goes out as `<COMPACT-LOCAL-SUMMARY>` and its state is never stored
 * (see `SessionState.local`), so no version of a session is ever sent with two texts.
 */
import type { EventTiming } from '../../events/event-bus.js';
import type { SessionState } from '../../session/session-store.js';
import { FailOpenStore } from '../../store/fail-open-store.js';
import type { PipelineDeps, PreparedRequest } from '../prepare-request.js';
import type { CascadeResult } from '../run-cascade.js';

/**
 * Makes `state` a local answer's (`SessionState.local`): it claims no version (it keeps the
 * highest version known, the one it extends) and its summary goes out as a local summary. While
 * the store is down it is kept in this process (`FailOpenStore.keepLocal`), so the next calls
 * extend it; it is never written to the store.
 */
export function localize(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  cascade: CascadeResult,
  state: SessionState,
): void {
  state.version = Math.max(0, prepared.view.nextVersion - 1, prepared.state?.version ?? 0);
  state.local = true;
  if (cascade.summary) cascade.summary.version = state.version;
  if (deps.store instanceof FailOpenStore) deps.store.keepLocal(prepared.key, state);
}

/** The one event of a call answered without storing because the store kept changing. */
export function emitContended(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  fallback: 'local' | 'stored-view',
  reloads: number,
  timing: (start: number) => EventTiming,
): void {
  const answer =
    fallback === 'local'
      ? 'a compaction that is not stored'
      : 'the newest stored view, which fits the budget';
  deps.bus.emit(
    prepared.context,
    'compact.error',
    {
      errorType: 'concurrent_compaction',
      message: `the stored state kept changing during compaction (${reloads} reloads): this call is answered with ${answer}`,
      fallback,
      context: { reloads },
    },
    timing(Date.now()),
  );
  deps.archive.trackEvents(prepared.context);
}
