/** The session's pace since its last compaction, for the cost trigger (`policy.costTrigger`). */
import type { CompactPolicy } from '../policy.js';
import type { CallPace } from './decide.js';
import type { SessionView } from './session-view.js';

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
  let appended = 0;
  while (appended < entries.length && entries[entries.length - 1 - appended]!.item.id !== newestKept)
    appended++;
  // The newest kept message is not in this view (rewritten by the caller): the view's messages
  // beyond as many as the compaction kept.
  if (appended === entries.length && trough !== undefined)
    appended = Math.max(0, entries.length - kept.length);
  return { trough, appended };
}
