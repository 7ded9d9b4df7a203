import { escapeHtml } from './html-escape.js';
import { renderCards } from './render-cards.js';
import { renderChart } from './render-chart.js';
import type { TraceCall, TraceCompaction, TraceModel } from './trace-model.js';
import type { TraceCost } from './trace-types.js';

/** Options of {@link renderReport}. */
export interface RenderReportOptions {
  /** Where the trace came from (shown in the header). */
  source: string;
  /** A note under the header (e.g. that an archive holds compacting calls only). */
  note?: string;
  /** When the page was made. @default now */
  generatedAt?: Date;
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;color:#1f2328;background:#fff;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px}h3{font-size:16px;margin:0 0 8px}h4{font-size:14px;margin:12px 0 4px}
.muted{color:#656d76;font-weight:normal}.facts{display:flex;flex-wrap:wrap;gap:6px 18px;margin:8px 0;padding:0;list-style:none}
.chart{max-width:100%;height:auto;border:1px solid #d0d7de;border-radius:6px;background:#fcfcfd}
.chart .grid{stroke:#eaeef2}.chart .tick,.chart .axis-label,.chart .limit-label{font-size:11px;fill:#656d76}
.chart .tokens{fill:none;stroke:#0969da;stroke-width:1.6}
.chart .limit{stroke-width:1.2;stroke-dasharray:6 4}.chart .window{stroke:#cf222e}.chart .trigger{stroke:#bf8700}.chart .target{stroke:#1a7f37}
.chart .limit-label.window{fill:#cf222e}.chart .limit-label.trigger{fill:#9a6700}.chart .limit-label.target{fill:#1a7f37}
.chart .compaction-marker{fill:#8250df;stroke:#fff;stroke-width:1.5}.chart .compaction-marker.has-error{fill:#cf222e}
.chart .usage-point{fill:#1a7f37}
.usage{border-collapse:collapse;font-size:13px}.usage td,.usage th{padding:2px 8px;text-align:right}
.card{border:1px solid #d0d7de;border-radius:6px;padding:12px 16px;margin:12px 0}.card.has-error{border-color:#cf222e;box-shadow:0 0 0 1px #cf222e33}
table.levels{border-collapse:collapse;margin:6px 0}table.levels th,table.levels td{border-bottom:1px solid #eaeef2;padding:3px 10px;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.errors{background:#ffebe9;border:1px solid #ff818266;border-radius:6px;padding:4px 12px}.errors ul{margin:4px 0;padding-left:18px}
.badge{background:#fff8c5;border:1px solid #d4a72c;border-radius:10px;padding:0 8px;font-size:12px;font-weight:normal}
.fallback{color:#9a6700}
pre{background:#f6f8fa;border-radius:6px;padding:8px;overflow-x:auto;white-space:pre-wrap;font-size:12.5px}
.line{display:inline}ins.line{background:#dafbe1;text-decoration:none}del.line{background:#ffebe9;color:#82071e}
.refs code{font-size:12px;word-break:break-all}.empty{color:#656d76}
`;

/** `n word` with the word in the plural unless n is 1: "1 call", "2 calls", "0 errors". */
export function counted(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The prompt-cache facts of one session's reported usage (`which` names it in a trace of several). */
function costFacts(cost: TraceCost, which: string): string[] {
  const fmt = (n: number) => Math.round(n).toLocaleString('en');
  return [
    `prompt cache${which}: ${(100 * cost.hitShare).toFixed(1)}% hit over ${cost.requests} reported requests`,
    `billed-equivalent input${which}: ${fmt(cost.billedInputEquivalent)} tokens`,
    ...(cost.requests > 0
      ? [
          `billed-equivalent input per reported request${which}: ${fmt(cost.billedInputEquivalent / cost.requests)} tokens`,
        ]
      : []),
    `prefix rewrites${which}: ${cost.prefixRewrites}`,
  ];
}

/**
 * The sessions a page names in its header, and charts, at most: a trace of 20,000 sessions
 * made a header of 20,000 ids and 20,000 charts (42 MB, 5.8 s). The cards still show them all.
 */
export const REPORT_CHARTED_SESSIONS = 50;

/** `ids` joined, the first {@link REPORT_CHARTED_SESSIONS} of them, with how many more there are. */
function someIds(ids: readonly string[]): string {
  const shown = ids.slice(0, REPORT_CHARTED_SESSIONS).join(', ');
  return ids.length > REPORT_CHARTED_SESSIONS
    ? `${shown} and ${ids.length - REPORT_CHARTED_SESSIONS} more`
    : shown;
}

/** The header facts: model, sessions, calls, compactions, errors. */
function facts(trace: TraceModel): string {
  const errors = trace.compactions.reduce((n, c) => n + c.errors.length, 0) + trace.otherErrors.length;
  const costs = trace.sessionCosts.slice(0, REPORT_CHARTED_SESSIONS);
  const items = [
    `model: ${trace.model ?? 'unknown'}`,
    `session${trace.sessionIds.length === 1 ? '' : 's'}: ${someIds(trace.sessionIds) || '-'}`,
    counted(trace.calls.length, 'call'),
    counted(trace.compactions.length, 'compaction'),
    counted(errors, 'error'),
    counted(trace.eventCount, 'event'),
    ...(trace.sessionCosts.length === 1 ? costFacts(trace.sessionCosts[0]!, '') : []),
    ...(trace.sessionCosts.length > 1
      ? costs.flatMap((cost) => costFacts(cost, ` (session ${cost.sessionId})`))
      : []),
    ...(trace.sessionCosts.length > costs.length
      ? [`prompt cache of ${trace.sessionCosts.length - costs.length} more sessions: in the trace`]
      : []),
  ];
  return `<ul class="facts">${items.map((item) => `<li>${escapeHtml(item)}</li>`).join('')}</ul>`;
}

/** The calls whose provider usage was recorded: what each billed, in base-price input tokens. */
function usageTable(trace: TraceModel): string {
  const calls = trace.calls.filter((call) => call.usage !== undefined);
  if (calls.length === 0) return '';
  const fmt = (n: number) => Math.round(n).toLocaleString('en');
  const rows = calls.map((call) => {
    const usage = call.usage!;
    return `<tr><td>${escapeHtml(call.index)}</td><td>${escapeHtml(fmt(usage.inputTokens))}</td><td>${escapeHtml((100 * usage.hitShare).toFixed(0))}%</td><td>${escapeHtml(fmt(usage.billedInputEquivalent))}</td></tr>`;
  });
  return `<h2>Billed input per call</h2>
<p class="muted">Where the provider's usage was recorded: the input it reported, the share read from the prompt cache, and the billed-equivalent input (input tokens at the model's base price).</p>
<table class="usage"><thead><tr><th>call</th><th>input tokens</th><th>from the cache</th><th>billed-equivalent input</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function otherErrors(trace: TraceModel): string {
  if (trace.otherErrors.length === 0) return '';
  const items = trace.otherErrors.map(
    (error) =>
      `<li><strong>${escapeHtml(error.errorType)}</strong>: ${escapeHtml(error.message)} <span class="fallback">fallback: ${escapeHtml(error.fallback)}</span></li>`,
  );
  return `<h2>Errors outside compactions</h2><div class="errors"><ul>${items.join('')}</ul></div>`;
}

/** What the reader skipped in the trace (fields not of their type), so the page says it. */
function notesBlock(trace: TraceModel): string {
  if (trace.notes.length === 0) return '';
  const items = trace.notes.map((note) => `<li>${escapeHtml(note)}</li>`);
  return `<h2>Skipped trace fields</h2><p class="muted">These fields were not of their type and are not shown.</p><ul class="notes">${items.join('')}</ul>`;
}

/**
 * The chart, or one per session when the trace holds several (their calls are not one line),
 * for the first {@link REPORT_CHARTED_SESSIONS} sessions. Calls and compactions are grouped
 * by session in one pass over each.
 */
function charts(trace: TraceModel): string {
  if (trace.sessionIds.length <= 1) return renderChart(trace);
  const charted = trace.sessionIds.slice(0, REPORT_CHARTED_SESSIONS);
  const groups = new Map(
    charted.map((id) => [id, { calls: [] as TraceCall[], compactions: [] as TraceCompaction[] }]),
  );
  for (const call of trace.calls) groups.get(call.sessionId)?.calls.push(call);
  for (const compaction of trace.compactions)
    groups.get(compaction.call.sessionId)?.compactions.push(compaction);
  const rest = trace.sessionIds.length - charted.length;
  const more =
    rest > 0
      ? `\n<p class="muted more-sessions">${escapeHtml(`${counted(rest, 'more session')} not charted here: their compactions are in the cards below, their calls in the trace.`)}</p>`
      : '';
  return (
    charted
      .map((sessionId) => {
        const { calls, compactions } = groups.get(sessionId)!;
        return `<h3>Session ${escapeHtml(sessionId)}</h3>\n${renderChart({ ...trace, calls, compactions }, `Context tokens per call, session ${sessionId}`)}`;
      })
      .join('\n') + more
  );
}

/**
 * One self-contained HTML page for a trace: the chart of context tokens per call (inline
 * SVG, no script, nothing fetched), then a card per compaction. Every text is HTML-escaped;
 * the events are expected redacted already.
 */
export function renderReport(trace: TraceModel, options: RenderReportOptions): string {
  const generated = (options.generatedAt ?? new Date()).toISOString();
  const cards =
    trace.compactions.length === 0
      ? '<p class="empty">No compactions in this trace.</p>'
      : renderCards(trace.compactions);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>agent-compaction report: ${escapeHtml(options.source)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>What compaction did</h1>
<p class="muted">${escapeHtml(options.source)} · generated ${escapeHtml(generated)} by agent-compaction</p>
${facts(trace)}
${options.note === undefined ? '' : `<p class="muted">${escapeHtml(options.note)}</p>`}
</header>
<h2>Context tokens per call</h2>
<p class="muted">Each point is the request a call sent (after compaction when it compacted); a marker is a compaction, with the count before it in its tooltip and card.</p>
${charts(trace)}
<h2>Compactions</h2>
${cards}
${usageTable(trace)}
${otherErrors(trace)}
${notesBlock(trace)}
</body>
</html>
`;
}
