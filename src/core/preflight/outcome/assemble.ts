/**
 * Step 6: assemble the request: the pinned messages older than the verbatim suffix and the
 * user's own messages kept from the folded part, in history order, one summary message, then the verbatim suffix (pinned messages inside it
 * keep their place); before any summary exists, the view goes out in history order.
 * Provider shape rules: an Anthropic request starts with a user turn, so when the pinned
 * layer would open with an assistant message the summary (a user turn) goes first
 * (`summaryPlace`, the rule the integrations apply to the OpenAI formats after the manager:
 * `../../messages/summary-first.ts`), unless the head holds a provider compaction boundary (the
 * summary then follows it).
 */

import { ChunkedList } from '../../chunked-list.js';
import type { MessageFormat } from '../../messages/message.js';
import { summaryPlace, turnOfRole } from '../../messages/summary-first.js';
import { runSteps, type Steps } from '../../time-slice.js';
import type { ViewEntry } from '../view/session-view.js';

const wireOf = (entry: ViewEntry): unknown => entry.wire;

/** Entries looked at between two pauses of {@link assembleSteps}. */
const STEP_ENTRIES = 1_024;

/**
 * The wire messages of a view. `pick` reads what goes out of each entry (its wire by
 * default): the request guard passes the entry itself to walk the request's order over the
 * entries, with no copy of each (a copy per entry of a long view lived through the guard's
 * slices, survivors for the scavenges of a cold call: issue 47).
 */
export function assemble<T = unknown>(
  entries: readonly ViewEntry[],
  summaryWire: T | undefined,
  format: MessageFormat,
  pick: (entry: ViewEntry) => T = wireOf as (entry: ViewEntry) => T,
): T[] {
  return runSteps(assembleSteps(entries, summaryWire, format, pick));
}

/**
 * {@link assemble} as steps, a pause every {@link STEP_ENTRIES} entries (300k entries were
 * one stretch of the loop): the same messages in the same order, written into one array.
 */
export function* assembleSteps<T = unknown>(
  entries: readonly ViewEntry[],
  summaryWire: T | undefined,
  format: MessageFormat,
  pick: (entry: ViewEntry) => T = wireOf as (entry: ViewEntry) => T,
): Steps<T[]> {
  // Gathered in chunks, made one array at its size at the end (300k pushed grew it by copies).
  const out = new ChunkedList<T>();
  if (summaryWire === undefined) {
    yield* pickInto(out, entries, 0, entries.length, pick);
    yield;
    return out.toArray();
  }
  // Pinned messages before the verbatim suffix go to the head, with the user's own messages
  // kept verbatim from the folded part; pinned messages inside the suffix keep their place.
  let suffixStart = -1;
  // Never before a provider compaction boundary (the API would drop the summary with what
  // precedes the block): the head then holds the boundary, and the summary follows it.
  let firstBoundary = -1;
  for (let k = 0; k < entries.length; k++) {
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    const entry = entries[k]!;
    if (!entry.pinned && !entry.userText) {
      suffixStart = k;
      break;
    }
    if (firstBoundary < 0 && entry.item.entry.parsed.providerCompaction === 'boundary') firstBoundary = k;
  }
  // The newest message always goes last, after the summary, even when it is pinned.
  if (suffixStart < 0 && entries.length > 0) suffixStart = entries.length - 1;
  const headEnd = suffixStart < 0 ? entries.length : suffixStart;
  const bounded = firstBoundary >= 0 && firstBoundary < headEnd;
  // An Anthropic request opens with a user turn: the summary goes first when the head would
  // open with another (`summaryPlace`), else after the head.
  const first =
    format !== 'anthropic' || bounded
      ? undefined
      : summaryPlace(headEnd, (index) => turnOfRole(entries[index]!.item.entry.parsed.role));
  const at = first ?? headEnd;
  yield* pickInto(out, entries, 0, at, pick);
  out.push(summaryWire);
  yield* pickInto(out, entries, at, entries.length, pick);
  yield;
  return out.toArray();
}

/** Pushes `pick` of `entries[from..to)` onto `out`, a pause every {@link STEP_ENTRIES}. */
function* pickInto<T>(
  out: ChunkedList<T>,
  entries: readonly ViewEntry[],
  from: number,
  to: number,
  pick: (entry: ViewEntry) => T,
): Steps<void> {
  for (let k = from; k < to; k++) {
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    out.push(pick(entries[k]!));
  }
}
