/**
 * The conversation as its last request sent it, up to the last message a compaction folds:
 * pinned messages, the user's words kept verbatim, the previous summary message and the
 * folded messages in the form they were sent (a placeholder where an earlier compaction
 * cleared). A summarizer that repeats it before its instruction (`cachedPrefix`) is served by
 * the provider's prompt cache of the conversation.
 */
import type { MessageFormat } from '../../messages/message.js';
import type { SentPrefix } from '../../summary/summarizer.js';
import { runSteps, type Steps } from '../../time-slice.js';
import type { SessionView, ViewEntry } from '../view/session-view.js';
import { assembleSteps } from './assemble.js';

/** Entries looked at between two pauses of {@link sentPrefixSteps}' search. */
const STEP_ENTRIES = 4_096;

/** The sent prefix ending with the last of `folded`, or undefined when it cannot be found. */
export function sentPrefixOf(
  view: SessionView,
  summaryWire: unknown,
  folded: readonly ViewEntry[],
  format: MessageFormat,
): SentPrefix | undefined {
  return runSteps(sentPrefixSteps(view, summaryWire, folded, format));
}

/**
 * {@link sentPrefixOf} as steps, a pause every few thousand entries (over 300k entries the
 * search and the assembly were one 30 ms stretch of the loop): the same prefix.
 */
export function* sentPrefixSteps(
  view: SessionView,
  summaryWire: unknown,
  folded: readonly ViewEntry[],
  format: MessageFormat,
): Steps<SentPrefix | undefined> {
  const last = folded.at(-1);
  if (!last || view.mismatch) return undefined;
  // The view holds the wires as the last request sent them (the cascade rewrites copies).
  const entries = view.entries;
  let sentWire: unknown;
  for (let k = 0; k < entries.length; k++) {
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    if (entries[k]!.item.id === last.item.id) {
      sentWire = entries[k]!.wire;
      break;
    }
  }
  if (sentWire === undefined) return undefined;
  const sent = yield* assembleSteps(entries, view.version > 0 ? summaryWire : undefined, format);
  yield;
  const end = sent.indexOf(sentWire);
  if (end < 0) return undefined;
  // The assembled array is this call's own: cut in place rather than copied.
  sent.length = end + 1;
  const messages = sent;
  const summaryIndex = summaryWire === undefined ? -1 : messages.indexOf(summaryWire);
  return { messages, ...(summaryIndex >= 0 ? { summaryIndex } : {}) };
}
