/**
 * Checks a summarizer's output before it becomes the summary (see `../summary/summary-guard.ts`): an
 * empty output, a plain-text refusal, an output with none of the strategy's structure, or one
 * that echoes the prompt or the transcript is a failure (it goes down the fallback chain, and
 * is never stored as summary text). A usable output has the library's tags defused.
 */
import { defuseSummaryMarkup, checkSummaryOutput as guard } from '../../summary/summary-guard.js';

/**
 * Returns why `text` cannot be a summary (`empty`, `refusal`, `no_structure` or `echo`), or
 * `undefined` when it can; `source` is what the summarizer was given.
 */
export function checkSummaryOutput(text: string, strategy: string, source?: string): string | undefined {
  const check = guard(text, { strategy, ...(source === undefined ? {} : { prompt: source }) });
  return check.ok ? undefined : check.reason;
}

/** The summary body to store and wrap: `text` with `<COMPACT-SUMMARY>` and the other library tags defused. */
export function summaryBodyFrom(text: string): string {
  return defuseSummaryMarkup(text);
}
