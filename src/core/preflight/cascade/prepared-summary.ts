/**
 * A summary prepared off the critical path (src/core/background) as the pipeline receives it:
 * types only, so the pipeline does not import the background machinery.
 */
import type { CompactEventProperties } from '../../events/events.js';
import type { SummarizeOutcome } from './summarize-remainder.js';

/** An event a preparation produced, delivered only if its summary is used. */
export interface BufferedEvent {
  name: 'compact.summary_created' | 'compact.error' | 'compact.circuit';
  properties: CompactEventProperties['compact.summary_created' | 'compact.error' | 'compact.circuit'];
  start: number;
}

/** A finished preparation handed to a triggered preflight. */
export interface PreparedSummary {
  readonly outcome: SummarizeOutcome;
  /** Ids of the folded messages, in history order. */
  readonly foldedIds: readonly string[];
  /** The summarizer's events, to emit under the preflight that uses the summary. */
  readonly events: readonly BufferedEvent[];
}
