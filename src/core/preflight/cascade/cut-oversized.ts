/**
 * Cascade level d, the last resort: a message of the verbatim suffix too large for the
 * window (a log dump, a 200 KB file read) is cut head and tail around a marker saying how
 * much was removed and where the full text is. Largest first, until the request fits (the
 * target when possible, the budget at least). The newest message is sent as given (issue 43):
 * it is cut only when every other message is cut as far as it goes, the summary has given up
 * what lines it can spare (`beforeNewest`: trim-summary-lines.ts), and the request still
 * exceeds its limit (the budget, or the caller's real limit when the budget is aimed lower:
 * `CascadeRun.limit`), that is when it alone is too large for what the window leaves it. A
 * message of the user's own words waits the same way, just before the newest: the summary
 * gives up its lines for it first.
 */
import { runSteps, type Steps } from '../../time-slice.js';
import { rewriteRef } from '../view/realize-rewrite.js';
import { applyRewrite, type CascadeRun, type LevelReport } from './cascade-types.js';

/** The characters of a message's text, as a rough size for the cut. */
function textLength(wire: unknown): number {
  return JSON.stringify(wire)?.length ?? 0;
}

/** Cuts the largest unpinned messages of `run` until it fits `limit`. */
export function cutOversized(run: CascadeRun, limit: number): LevelReport {
  return runSteps(cutOversizedSteps(run, limit));
}

/**
 * {@link cutOversized} as {@link Steps}: a pause after each cut. `beforeNewest` runs when every
 * other message is cut as far as it goes and the request is still over its limit, before the
 * newest is cut (the cascade trims its summary there: the newest goes whole when the summary's
 * least valued lines make room for it).
 */
export function* cutOversizedSteps(
  run: CascadeRun,
  limit: number,
  beforeNewest?: () => number,
): Steps<LevelReport> {
  const report: LevelReport = { level: 'cut_oversized', count: 0, tokensSaved: 0, refs: [] };
  const newest = run.entries.length - 1;
  // The user's own words are worth more than the summary's least valued lines: they are held
  // back with the newest, and cut (to the limit) only when the request still exceeds its hard
  // limit once the summary has given up what it can spare for them.
  const words = run.entries.flatMap((entry, k) => (k !== newest && userWords(entry) ? [k] : []));
  // Every other message first, to the limit; the newest only if the request still exceeds
  // its hard limit without it cut. Then as deep as any cut goes (to the limit): a request
  // left at its hard limit would trigger again on the next call and re-summarize each time.
  const exhausted = new Set<number>([newest, ...words]);
  yield* cutLargest(run, limit, exhausted, report);
  const giveUpLines = () => {
    if (run.total <= run.limit || !beforeNewest) return;
    const given = beforeNewest();
    if (given > 0) report.summaryLinesGivenUp = (report.summaryLinesGivenUp ?? 0) + given;
  };
  giveUpLines();
  if (run.total > run.limit && words.length > 0) {
    for (const k of words) exhausted.delete(k);
    yield* cutLargest(run, limit, exhausted, report);
    giveUpLines();
  }
  if (run.total > run.limit) {
    exhausted.delete(newest);
    yield* cutLargest(run, limit, exhausted, report);
  }
  return report;
}

/** A message of the user's own words (not a tool result carried in a user turn). */
function userWords(entry: CascadeRun['entries'][number]): boolean {
  const parsed = entry.item.entry.parsed;
  return entry.userText === true || (parsed.role === 'user' && parsed.toolResults.length === 0);
}

function* cutLargest(
  run: CascadeRun,
  limit: number,
  exhausted: Set<number>,
  report: LevelReport,
): Steps<void> {
  for (let guard = 0; guard < 64 && run.total > limit; guard++) {
    if (guard > 0) yield;
    let largest = -1;
    run.entries.forEach((entry, k) => {
      if (entry.pinned || entry.tokens < 64 || exhausted.has(k)) return;
      if (entry.rewrite && entry.rewrite.kind !== 'cut') return;
      if (largest < 0 || entry.tokens > run.entries[largest]!.tokens) largest = k;
    });
    if (largest < 0) break;
    const entry = run.entries[largest]!;
    const excess = run.total - limit;
    const keepTokens = Math.max(32, entry.tokens - excess - 48);
    const chars = textLength(entry.item.entry.wire);
    const charsPerToken = chars / Math.max(1, entry.originalTokens);
    const previous = entry.rewrite?.kind === 'cut' ? (entry.rewrite.keepChars ?? chars) : chars;
    const keepChars = Math.max(64, Math.min(previous - 1, Math.floor(keepTokens * charsPerToken * 0.9)));
    const ref = entry.rewrite?.kind === 'cut' ? entry.rewrite.ref : rewriteRef('cut', entry.item.id);
    const saved = applyRewrite(run, largest, { kind: 'cut', ref, keepChars });
    if (saved <= 0) {
      exhausted.add(largest);
      continue;
    }
    report.tokensSaved += saved;
    if (!report.refs.includes(ref)) {
      report.refs.push(ref);
      report.count++;
    }
  }
}
