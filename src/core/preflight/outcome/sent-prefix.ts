/**
 * The conversation as its last request sent it, up to the last message a compaction folds:
 * pinned messages, the user's words kept verbatim, the previous summary message and the
 * folded messages in the form they were sent (a placeholder where an earlier compaction
 * cleared). A summarizer that repeats it before its instruction (`cachedPrefix`) is served by
 * the provider's prompt cache of the conversation.
 */
import type { MessageFormat } from '../../messages/message.js';
import type { SentPrefix } from '../../summary/summarizer.js';
import type { SessionView, ViewEntry } from '../view/session-view.js';
import { assemble } from './assemble.js';

/** The sent prefix ending with the last of `folded`, or undefined when it cannot be found. */
export function sentPrefixOf(
  view: SessionView,
  summaryWire: unknown,
  folded: readonly ViewEntry[],
  format: MessageFormat,
): SentPrefix | undefined {
  const last = folded.at(-1);
  if (!last || view.mismatch) return undefined;
  // The view holds the wires as the last request sent them (the cascade rewrites copies).
  const sentWire = view.entries.find((entry) => entry.item.id === last.item.id)?.wire;
  if (sentWire === undefined) return undefined;
  const sent = assemble(view.entries, view.version > 0 ? summaryWire : undefined, format);
  const end = sent.indexOf(sentWire);
  if (end < 0) return undefined;
  const messages = sent.slice(0, end + 1);
  const summaryIndex = summaryWire === undefined ? -1 : messages.indexOf(summaryWire);
  return { messages, ...(summaryIndex >= 0 ? { summaryIndex } : {}) };
}
