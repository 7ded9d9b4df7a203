/**
 * Checks a summarizer's output before it becomes the summary: an empty output is a
 * failure (it goes down the fallback chain, and is never stored as summary text).
 */

/** Returns why `text` cannot be a summary, or `undefined` when it can. */
export function checkSummaryOutput(text: string, _strategy: string): string | undefined {
  if (text.trim() === '') return 'the summarizer returned an empty summary';
  return undefined;
}
