/** The session's pace since its last compaction, for the cost trigger (`policy.costTrigger`). */
import type { CompactPolicy } from '../policy.js';
import { onProcessCachesRelease } from '../process-caches.js';
import type { SessionState } from '../session/session-store.js';
import type { CallPace } from './decide.js';
import type { SessionView } from './view/session-view.js';

/** Where {@link paceOf} left a view: the entries it read and the messages after the newest kept one among them. */
interface PaceSeen {
  matched: SessionState | undefined;
  seen: number;
  /** Entries after the last one that is the newest kept message (all of them when none is). */
  after: number;
  found: boolean;
}

/**
 * Per view (its entries only grow by appending), so that a warm call reads only its new entries.
 * Replaced when the last manager shuts down: V8 clears the entries of collected views but keeps
 * the table's room for as many views as were ever held at once.
 */
let paceSeen = new WeakMap<SessionView, PaceSeen>();
onProcessCachesRelease(() => {
  paceSeen = new WeakMap();
});

/**
 * The session's pace since the compaction its view resumes, from the stored state (the same in
 * every process, for a raw history and a view sent back alike): what that compaction left, and
 * the view's messages after the newest one it kept (only counted for the cost trigger).
 */
export function paceOf(view: SessionView, policy: Readonly<CompactPolicy>): CallPace {
  const trough = view.matched?.pace?.trough;
  if (!policy.costTrigger) return { trough, appended: 0 };
  const kept = view.matched?.keptIds ?? [];
  const newestKept = kept.at(-1);
  const { entries } = view;
  let seen = paceSeen.get(view);
  if (seen === undefined || seen.matched !== view.matched || seen.seen > entries.length) {
    seen = { matched: view.matched, seen: 0, after: 0, found: false };
    paceSeen.set(view, seen);
  }
  // The newest occurrence of the newest kept message decides: read forward, reset at each.
  for (let k = seen.seen; k < entries.length; k++) {
    if (newestKept !== undefined && entries[k]!.item.id === newestKept) {
      seen.after = 0;
      seen.found = true;
    } else seen.after++;
  }
  seen.seen = entries.length;
  // The newest kept message is not in this view (rewritten by the caller): the view's messages
  // beyond as many as the compaction kept.
  if (!seen.found && trough !== undefined)
    return { trough, appended: Math.max(0, entries.length - kept.length) };
  return { trough, appended: seen.after };
}
