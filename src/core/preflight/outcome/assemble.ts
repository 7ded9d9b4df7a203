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
import type { MessageFormat } from '../../messages/message.js';
import { summaryPlace, turnOfRole } from '../../messages/summary-first.js';
import type { ViewEntry } from '../view/session-view.js';

const wireOf = (entry: ViewEntry): unknown => entry.wire;

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
  if (summaryWire === undefined) return entries.map(pick);
  // Pinned messages before the verbatim suffix go to the head, with the user's own messages
  // kept verbatim from the folded part; pinned messages inside the suffix keep their place.
  let suffixStart = entries.findIndex((entry) => !entry.pinned && !entry.userText);
  // The newest message always goes last, after the summary, even when it is pinned.
  if (suffixStart < 0 && entries.length > 0) suffixStart = entries.length - 1;
  const head = suffixStart < 0 ? entries : entries.slice(0, suffixStart);
  const rest = suffixStart < 0 ? [] : entries.slice(suffixStart).map(pick);
  const pinned = head.map(pick);
  if (format !== 'anthropic') return [...pinned, summaryWire, ...rest];
  // Never before a provider compaction boundary (the API would drop the summary with what
  // precedes the block): the head then holds the boundary, and the summary follows it.
  const bounded = head.some((entry) => entry.item.entry.parsed.providerCompaction === 'boundary');
  const first = bounded
    ? undefined
    : summaryPlace(head.length, (index) => turnOfRole(head[index]!.item.entry.parsed.role));
  if (first === undefined) return [...pinned, summaryWire, ...rest];
  return [...pinned.slice(0, first), summaryWire, ...pinned.slice(first), ...rest];
}
