import { escapeHtml } from './html-escape.js';
import { type DiffBudget, type DiffLine, diffBudget, REPORT_DIFF_CELLS } from './line-diff.js';
import { summaryDiff } from './summary-diff.js';
import { freedText, levelLabel, type TraceCompaction, type TraceError } from './trace-model.js';

/**
 * The characters of its summary (and of the lines removed from the previous one) a card shows
 * at most: a summary of megabytes made a page a browser could not load. The trace keeps it whole.
 */
export const REPORT_SUMMARY_CHARS = 64_000;

/**
 * The characters of summaries one page shows in all: 500 compactions of 60,000-character
 * summaries made a page of 31 MB. Past it a card says where the summary is (the trace).
 */
export const REPORT_PAGE_SUMMARY_CHARS = 1_000_000;

/** What is left of the page's {@link REPORT_PAGE_SUMMARY_CHARS}, shared by its cards. */
interface TextBudget {
  left: number;
}

const fmt = (n: number | undefined) => (n === undefined ? '-' : Math.round(n).toLocaleString('en-US'));

/** Why the compaction ran, in words, with the figures behind it. */
function whyText(compaction: TraceCompaction): string {
  const { call } = compaction;
  const figures = [
    `${fmt(compaction.tokensBefore)} tokens`,
    call.triggerTokens === undefined ? '' : `trigger ${fmt(call.triggerTokens)}`,
    call.budget === undefined ? '' : `budget ${fmt(call.budget)}`,
    call.maxTokens === undefined ? '' : `window ${fmt(call.maxTokens)}`,
  ].filter(Boolean);
  const manual = compaction.manual ? ' (forced)' : '';
  const note = compaction.note === undefined ? '' : `; note: ${compaction.note}`;
  return `${compaction.reason}${manual}: ${figures.join(', ')}${note}`;
}

/** The levels with tokens before and after each (running from the request's size). */
function levelsTable(compaction: TraceCompaction): string {
  if (compaction.levels.length === 0) return '<p class="muted">No level reported a reduction.</p>';
  let running = compaction.tokensBefore;
  const rows = compaction.levels.map((level) => {
    const before = running;
    running = Math.max(0, running - level.tokensSaved);
    return `<tr data-level="${escapeHtml(level.level)}"><td>${escapeHtml(levelLabel(level.level))}</td><td class="num">${fmt(level.count)}</td><td class="num">${fmt(before)}</td><td class="num">${fmt(running)}</td><td class="num">${escapeHtml(freedText(level.tokensSaved))}</td></tr>`;
  });
  return `<table class="levels"><thead><tr><th>level</th><th>messages</th><th>tokens before</th><th>after</th><th>freed</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Kept / cleared / summarized counts. */
function countsText(compaction: TraceCompaction): string {
  const count = (level: string) => compaction.levels.find((item) => item.level === level)?.count ?? 0;
  const kept = compaction.kept;
  const parts = [
    kept
      ? `kept verbatim ${fmt(kept.pinned)} pinned, ${fmt(kept.recentTurns)} recent turns, ${fmt(kept.toolPairs)} tool pairs`
      : '',
    `cleared ${fmt(count('clear_tool_results'))}`,
    count('shorten_arguments') > 0 ? `shortened ${fmt(count('shorten_arguments'))}` : '',
    `summarized ${fmt(compaction.summarizedMessages ?? count('summarize'))}`,
    count('cut_oversized') > 0 ? `cut ${fmt(count('cut_oversized'))}` : '',
  ].filter(Boolean);
  return parts.join(' · ');
}

function errorsBlock(errors: readonly TraceError[]): string {
  if (errors.length === 0) return '';
  const items = errors.map(
    (error) =>
      `<li><strong>${escapeHtml(error.errorType)}</strong>: ${escapeHtml(error.message)} <span class="fallback">fallback: ${escapeHtml(error.fallback)}</span></li>`,
  );
  return `<div class="errors"><h4>Errors and fallbacks</h4><ul>${items.join('')}</ul></div>`;
}

function refsBlock(compaction: TraceCompaction): string {
  const refs = compaction.levels.flatMap((level) => level.refs);
  if (refs.length === 0) return '';
  return `<details class="refs"><summary>recall refs (${refs.length})</summary><code>${refs.map(escapeHtml).join(' ')}</code></details>`;
}

/**
 * The first lines of `lines` that fit in `cap` characters (the last one cut when it alone is
 * longer), and how many characters of the summary they show (removed lines are the previous one's).
 */
function capLines(
  lines: readonly DiffLine[],
  cap: number,
): { lines: DiffLine[]; shown: number; cut: boolean } {
  const kept: DiffLine[] = [];
  let left = cap;
  let shown = 0;
  for (const line of lines) {
    if (left <= 0) break;
    const text = line.text.length > left ? line.text.slice(0, left) : line.text;
    kept.push(text === line.text ? line : { ...line, text });
    left -= text.length + 1;
    if (line.kind !== 'removed') shown += text.length + 1;
  }
  const cut = kept.length < lines.length || kept.at(-1)?.text !== lines.at(-1)?.text;
  return { lines: kept, shown: Math.max(0, shown - 1), cut };
}

/**
 * The summary with what changed from the previous version marked (`ins` / `del` lines); shown
 * whole, and said so, when the page's diff budget cannot align it with the previous one; cut
 * at {@link REPORT_SUMMARY_CHARS}, and said so, when longer; not shown, and said so, once the
 * page's {@link REPORT_PAGE_SUMMARY_CHARS} are spent.
 */
function summaryBlock(
  compaction: TraceCompaction,
  previous: string | undefined,
  budget: DiffBudget,
  text: TextBudget,
): string {
  const summary = compaction.summary;
  if (summary === undefined) return '<p class="muted">No new summary in this compaction.</p>';
  if (text.left <= 0)
    return `<p class="muted cut">Summary not shown (${fmt(summary.length)} characters): this page already shows ${fmt(REPORT_PAGE_SUMMARY_CHARS)} characters of summaries; the whole summary is in the trace.</p>`;
  const refused = budget.refused;
  // A summary longer than a card shows is not compared: its diff would be cut anyway.
  const long = Math.max(summary.length, previous?.length ?? 0) > REPORT_SUMMARY_CHARS;
  const diff = previous === undefined || long ? undefined : summaryDiff(previous, summary, budget);
  const compared = diff !== undefined && budget.refused === refused;
  // The first summary, or one too long to compare, is shown plain.
  const all = compared ? diff : summary.split('\n').map((text) => ({ kind: 'same' as const, text }));
  const capped = capLines(all, Math.min(REPORT_SUMMARY_CHARS, text.left));
  text.left -= capped.lines.reduce((n, line) => n + line.text.length + 1, 0);
  const lines = capped.lines.map((line) => {
    const text = escapeHtml(line.text) || '&nbsp;';
    if (line.kind === 'added') return `<ins class="line added">${text}</ins>`;
    if (line.kind === 'removed') return `<del class="line removed">${text}</del>`;
    return `<span class="line">${text}</span>`;
  });
  const meta = escapeHtml(
    `v${compaction.version ?? '?'} · ${compaction.summarizer ?? '?'} · ${compaction.strategy ?? ''} · ${fmt(compaction.summaryTokens)} tokens`,
  );
  const legend =
    previous === undefined
      ? 'first summary'
      : compared
        ? 'changes from the previous summary: added lines in green, removed in red (list items compared regardless of order)'
        : `shown ${capped.cut ? 'plain' : 'whole'}: too long to compare line by line with the previous summary`;
  const cut = capped.cut
    ? `<p class="muted cut">shown ${fmt(capped.shown)} of ${fmt(summary.length)} characters; the whole summary is in the trace</p>`
    : '';
  return `<div class="summary"><h4>Summary <span class="muted">${meta}</span></h4><p class="muted">${legend}</p><pre>${lines.join('\n')}</pre>${cut}</div>`;
}

/**
 * One card per compaction. A summary is compared with the previous one of its own session
 * (a trace may hold several); with several sessions each card names its session. The diffs
 * share one budget of alignment work, so a trace of many long summaries renders in bounded time.
 */
export function renderCards(compactions: readonly TraceCompaction[]): string {
  const previousOf = new Map<string, string>();
  const budget = diffBudget(REPORT_DIFF_CELLS);
  const text: TextBudget = { left: REPORT_PAGE_SUMMARY_CHARS };
  const sessions = new Set(compactions.map((compaction) => compaction.call.sessionId));
  const cards = compactions.map((compaction) => {
    const number = escapeHtml(compaction.number);
    const call = escapeHtml(compaction.call.index);
    const session = sessions.size > 1 ? ` · session ${escapeHtml(compaction.call.sessionId)}` : '';
    const card = `<section class="card${compaction.errors.length > 0 ? ' has-error' : ''}" id="compaction-${number}" data-compaction="${number}" data-call="${call}">
<h3>#${number}${session} · call ${call} · ${fmt(compaction.tokensBefore)} → ${fmt(compaction.tokensAfter)} tokens${compaction.fallback === 'none' ? '' : ` <span class="badge">fallback: ${escapeHtml(compaction.fallback)}</span>`}</h3>
<p class="why"><strong>Why:</strong> ${escapeHtml(whyText(compaction))}</p>
${levelsTable(compaction)}
<p class="counts">${escapeHtml(countsText(compaction))}</p>
${errorsBlock(compaction.errors)}
${summaryBlock(compaction, previousOf.get(compaction.call.sessionId), budget, text)}
${refsBlock(compaction)}
</section>`;
    if (compaction.summary !== undefined) previousOf.set(compaction.call.sessionId, compaction.summary);
    return card;
  });
  return cards.join('\n');
}
