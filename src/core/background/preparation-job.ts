/** The job a manager hands to its preparation queue (see queues/preparation-queue.ts). */

import type { CompactMessage } from '../messages/message.js';
import { redactMessages } from '../preflight/cascade/summarize-remainder.js';
import { summaryBodyFrom } from '../preflight/cascade/summary-output.js';
import type { ViewEntry } from '../preflight/view/session-view.js';
import type { PreparationJob } from '../queues/preparation-queue.js';
import type { Redactor } from '../redaction/redactor.js';
import { defuseSummaryMarkup } from '../summary/summary-markup.js';

/**
 * The job of a preparation that folds `folded`, whose messages the summarizer sees as `messages`
 * (redacted here with `redact`, as the summarizer's input).
 */
export async function preparationJob(
  base: Omit<PreparationJob, 'messages' | 'foldedIds' | 'foldedHashes' | 'previousSummary' | 'enqueuedAt'>,
  folded: readonly ViewEntry[],
  messages: readonly CompactMessage[],
  previousSummary: string | undefined,
  redact: Redactor | undefined,
): Promise<PreparationJob> {
  const clean: Redactor = redact ? (text) => defuseSummaryMarkup(redact(text)) : defuseSummaryMarkup;
  const previous = previousSummary ? summaryBodyFrom(previousSummary) : undefined;
  return {
    ...base,
    foldedIds: folded.map((entry) => entry.item.id),
    foldedHashes: folded.map((entry) => entry.item.entry.hash),
    messages: await redactMessages(messages, clean),
    ...(previous ? { previousSummary: redact ? redact(previous) : previous } : {}),
    enqueuedAt: Date.now(),
  };
}
