/** The summarizer's run of an in-process background preparation (no queue). */

import type { BufferedEvent } from '../preflight/cascade/prepared-summary.js';
import {
  type SummarizeOutcome,
  summarizeWithFallback,
  withKnownCounts,
} from '../preflight/cascade/summarize-remainder.js';
import { checkSummaryOutput } from '../preflight/cascade/summary-output.js';
import type { ViewEntry } from '../preflight/view/session-view.js';
import {
  memoized,
  type PreparationRequest,
  preparationMessages,
  withoutArchiveLine,
} from './preparation-plan.js';

/** Summarizes `folded` with the fallback chain, its events buffered. */
export function summarizePreparation(
  folded: readonly ViewEntry[],
  request: PreparationRequest,
  signal: AbortSignal,
  events: BufferedEvent[],
): Promise<SummarizeOutcome | undefined> {
  const { view, policy } = request;
  return summarizeWithFallback(
    {
      ...request.summarize,
      counter: withKnownCounts(request.summarize.counter, folded),
      redact: memoized(request.summarize.redact),
      emit: (name, properties, start) => events.push({ name, properties, start }),
    },
    {
      sessionId: request.sessionId,
      strategy: policy.strategy,
      messages: preparationMessages(folded, request),
      maxTokens: policy.maxSummaryTokens,
      ...(view.previousSummary ? { previousSummary: withoutArchiveLine(view.previousSummary) } : {}),
      ...(request.agent ? { agent: request.agent } : {}),
      ...(request.withAssistant ? { withAssistant: true } : {}),
      signal,
    },
    view.nextVersion,
    checkSummaryOutput,
  );
}
