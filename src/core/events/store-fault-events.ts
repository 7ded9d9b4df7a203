/**
 * The events a failing session store leads to: one `compact.error` when an outage starts
 * (calls go on from the process's own copy of the state) and one when a stored state does
 * not read back (the session starts over).
 */
import type { EventBus, OperationContext } from './event-bus.js';
import { newSpanId } from './events.js';

/** A session's own context for an event outside any compaction. */
export function contextOf(key: string): OperationContext {
  return { sessionId: key, operationId: newSpanId(), traceId: key, parentId: undefined, archived: undefined };
}

/** The fail-open store's `onOutage` and `onCorrupt`, reporting on the manager's bus. */
export function storeFaultEvents(
  bus: EventBus,
  storeName: string,
): {
  onOutage: (key: string, cause: string) => void;
  onRecovery: (key: string, affectedCalls: number) => void;
  onCorrupt: (key: string, problem: string) => void;
  onLost: (key: string, knownVersion: number, storedVersion: number) => void;
  onFloor: (key: string, version: number) => void;
} {
  return {
    onOutage(key, cause) {
      bus.emit(
        contextOf(key),
        'compact.error',
        {
          errorType: 'storage_failed',
          message: `session store "${storeName}" failed: ${cause}; calls go on from this process's copy of the session state until it answers again`,
          fallback: 'in-process session state',
        },
        { start: Date.now() },
      );
    },
    onRecovery(key, affectedCalls) {
      bus.emit(
        contextOf(key),
        'compact.warning',
        {
          code: 'storage_recovered',
          message: `session store "${storeName}" answers again; ${affectedCalls} call(s) went on without it`,
          context: { target: 'store', name: storeName, affectedCalls },
        },
        { start: Date.now() },
      );
    },
    onLost(key, knownVersion, storedVersion) {
      bus.emit(
        contextOf(key),
        'compact.error',
        {
          errorType: 'storage_failed',
          message: `session store "${storeName}" lost the state of this session (it held v${knownVersion}, now ${storedVersion === 0 ? 'none' : `v${storedVersion}`}: restarted without persistence?); this process's copy was written back so versions never go down`,
          fallback: 'in-process session state',
          context: { knownVersion, storedVersion },
        },
        { start: Date.now() },
      );
    },
    onFloor(key, version) {
      bus.emit(
        contextOf(key),
        'compact.warning',
        {
          code: 'version_floor',
          message: `session store "${storeName}" held no state for this session, or an older one; the archive holds its summaries up to v${version}, so its versions resume above v${version} (they never go down)`,
          context: { target: 'store', name: storeName, version },
        },
        { start: Date.now() },
      );
    },
    onCorrupt(key, problem) {
      bus.emit(
        contextOf(key),
        'compact.error',
        { errorType: 'corrupt_state', message: problem, fallback: 'the session starts over as new' },
        { start: Date.now() },
      );
    },
  };
}

/**
 * The prepared-summary signing's `onRefused`: one `compact.error` (`forged_summary`) per
 * manager, at the first prepared record whose MAC does not verify (later ones are refused
 * quietly): a worker without the installation's summary key, or a record rewritten in the store.
 */
export function refusedPreparedEvent(bus: EventBus): (key: string, why: string) => void {
  let told = false;
  return (key, why) => {
    if (told) return;
    told = true;
    bus.emit(
      contextOf(key),
      'compact.error',
      {
        errorType: 'forged_summary',
        message: `a prepared summary in the store was refused (${why}): it is not signed with this installation's summary key. Workers need the agents' key (summaryKeys, COMPACT_SUMMARY_KEY or the same key file); the agents compact at their trigger meanwhile. Said once.`,
        fallback: 'cascade',
        context: { reason: why },
      },
      { start: Date.now() },
    );
  };
}
