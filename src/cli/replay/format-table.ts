import { freedText, levelLabel, type TraceCompaction, type TraceModel } from '../../report/trace-model.js';

/** `12345` -> `12,345`. */
export const formatNumber = (n: number): string => Math.round(n).toLocaleString('en-US');

/** The levels that ran with the tokens each freed: `cleared 52,011, summarized 15,317`. */
export function levelsText(compaction: TraceCompaction): string {
  if (compaction.levels.length === 0) return '-';
  return compaction.levels
    .map((level) => `${levelLabel(level.level)} ${freedText(level.tokensSaved)}`)
    .join(', ');
}

/** Lays out rows as aligned columns (numbers right-aligned). */
export function alignColumns(
  header: readonly string[],
  rows: readonly string[][],
  right: ReadonlySet<number>,
): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const render = (row: readonly string[]) =>
    row
      .map((cell, column) =>
        right.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  return [render(header), ...rows.map(render)].join('\n');
}

/**
 * The table of compactions `replay` prints: call, tokens before and after, the levels that
 * ran with what each freed, summary version, summarizer and fallback.
 */
export function compactionTable(trace: TraceModel): string {
  if (trace.compactions.length === 0) return 'no compactions';
  const header = [
    '#',
    'call',
    'before',
    'after',
    'levels (tokens freed)',
    'summary',
    'summarizer',
    'fallback',
  ];
  const rows = trace.compactions.map((compaction) => [
    String(compaction.number),
    String(compaction.call.index),
    formatNumber(compaction.tokensBefore),
    formatNumber(compaction.tokensAfter),
    levelsText(compaction),
    compaction.version === undefined || compaction.version === 0 ? '-' : `v${compaction.version}`,
    compaction.summarizer ?? '-',
    compaction.fallback === 'none' ? '-' : compaction.fallback,
  ]);
  return alignColumns(header, rows, new Set([0, 1, 2, 3]));
}
