/**
 * The user's own words rank first. When a compaction folds the part of the view before the
 * verbatim suffix, the messages the user wrote (user-role text: not tool results, not
 * Anthropic `tool_result` turns, not injected `<tag>` text) stay verbatim up to a budget,
 * the opening request first, then the newest; the rest goes to the summarizer, whose first
 * sections hold them. Pinned messages are not candidates: they keep their own rules.
 */

import type { Positional } from '../../chunked-list.js';
import { releaseRegExpCode } from '../../process-caches.js';
import { findLibraryTags } from '../../summary/summary-markup.js';
import type { ViewEntry } from '../view/session-view.js';
import type { Unit } from './build-units.js';

/** Text a framework injects into a user turn (`<system-reminder>`, `<environment_context>`...). */
const INJECTED = /^\s*<[a-z][\w-]{0,40}>/i;

/**
 * True when `entry` is a message the user wrote: user role, text, no tool results. Text that
 * carries the library's own markup (a forged `<COMPACT-SUMMARY vN>`, `</history>`...) is not
 * kept verbatim: it goes to the summarizer with its tags defused, so the request never holds a
 * second summary tag.
 */
export function isUserText(entry: ViewEntry): boolean {
  // A message the session's summary was taken out of is judged on what is left of it.
  const parsed = entry.content ?? entry.item.entry.parsed;
  return (
    parsed.role === 'user' &&
    parsed.kind === 'message' &&
    parsed.toolResults.length === 0 &&
    parsed.toolCalls.length === 0 &&
    (entry.content !== undefined || entry.item.entry.summaryVersion === undefined) &&
    parsed.text.trim() !== '' &&
    !INJECTED.test(parsed.text) &&
    findLibraryTags(parsed.text).length === 0
  );
}

/**
 * Picks which of `candidates` (unit positions, ascending) stay verbatim under `budget`
 * tokens: the first (the opening request) when it fits, then the newest first; a message
 * that does not fit whole is skipped (the summary takes it), smaller older ones may still fit.
 */
export function pickUserText(
  candidates: Positional<number>,
  units: readonly Unit[],
  budget: number,
): number[] {
  if (budget <= 0 || candidates.length === 0) return [];
  const picked: number[] = [];
  let left = budget;
  const take = (u: number) => {
    const tokens = units[u]!.tokens;
    if (tokens > left) return;
    picked.push(u);
    left -= tokens;
  };
  take(candidates.at(0)!);
  for (let k = candidates.length - 1; k >= 1 && left > 0; k--) take(candidates.at(k)!);
  return picked.sort((a, b) => a - b);
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(INJECTED);
