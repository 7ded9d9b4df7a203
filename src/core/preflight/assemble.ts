/**
 * Step 6: assemble the request: pinned messages in history order, one summary message,
 * then the verbatim suffix; before any summary exists, the view goes out in history order.
 * Provider shape rules: an Anthropic request starts with a user turn, so when the pinned
 * layer would open with an assistant message the summary (a user turn) goes first.
 */
import type { MessageFormat } from '../message.js';
import type { ViewEntry } from './resume-view.js';

/** The wire messages of a view. */
export function assemble(
  entries: readonly ViewEntry[],
  summaryWire: unknown | undefined,
  format: MessageFormat,
): unknown[] {
  if (summaryWire === undefined) return entries.map((entry) => entry.wire);
  const pinned: unknown[] = [];
  const rest: unknown[] = [];
  let firstPinnedRole: string | undefined;
  for (const entry of entries) {
    if (entry.pinned) {
      firstPinnedRole ??= entry.item.entry.parsed.role;
      pinned.push(entry.wire);
    } else rest.push(entry.wire);
  }
  if (format === 'anthropic' && firstPinnedRole !== undefined && firstPinnedRole !== 'user')
    return [summaryWire, ...pinned, ...rest];
  return [...pinned, summaryWire, ...rest];
}
