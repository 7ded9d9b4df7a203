/**
 * What a denser layout would save on the last summary of `real-chat-facts.ts` (issue 45,
 * point 3): each conversation compacted rolling at 1/`ratio` with the default policy, its last
 * summary's segments (`## 9 January`, then `- Name: text` lines) read back and written again in
 * other layouts, the same lines in each; tokens by gpt-4o's tokenizer, the user sections before
 * the first dated heading left out. No layout here changes what the summarizer chooses: it
 * prices the markup only (the rolling figures of a layout need it in the summarizer, see
 * bench/notes/issue-45-real-chat-candidates.md section 10).
 *
 * `npx tsx eval/real-chat-layouts.ts [--set tune|held-out|all] [--ratio 8]`
 */
import { parseArgs } from 'node:util';
import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import { loadRealChat, locomoSet } from './real-chat-facts.js';
import { rollRealChat } from './roll-real-chat.js';
import { textTable } from './text-table.js';

/** One dated segment of a summary: its heading's date and its speaker lines. */
export interface LayoutSegment {
  date: string;
  lines: { speaker: string; text: string }[];
}

const DATED = /^## (\d{1,2} [A-Z][a-z]+(?: \d{4})?)$/;
const SPEAKER_LINE = /^- ([\w.'’-]{1,30}(?: [\w.'’-]{1,20})?): (.*)$/;

/** The dated segments of a summary text (tags, mark and user sections left out). */
export function layoutSegments(summary: string): LayoutSegment[] {
  const out: LayoutSegment[] = [];
  for (const line of summary.split('\n')) {
    const heading = DATED.exec(line);
    if (heading) out.push({ date: heading[1]!, lines: [] });
    const speaker = SPEAKER_LINE.exec(line);
    if (speaker && out.length > 0) out.at(-1)!.lines.push({ speaker: speaker[1]!, text: speaker[2]! });
  }
  return out;
}

const joined = (segments: readonly LayoutSegment[], segment: (s: LayoutSegment) => string) =>
  segments.map(segment).join('\n');
const speakerLines = (s: LayoutSegment, bullet: string) =>
  s.lines.map((l) => `${bullet}${l.speaker}: ${l.text}`);

/** The layouts priced, by name: main's first. */
export const LAYOUTS: Record<string, (segments: readonly LayoutSegment[]) => string> = {
  'main (## date, - Name: lines)': (g) =>
    joined(g, (s) => [`## ${s.date}`, ...speakerLines(s, '- ')].join('\n')),
  'no bullets': (g) => joined(g, (s) => [`## ${s.date}`, ...speakerLines(s, '')].join('\n')),
  'one-line segment: date on its line, no heading': (g) =>
    joined(g, (s) =>
      s.lines.length === 1
        ? `- ${s.date}, ${s.lines[0]!.speaker}: ${s.lines[0]!.text}`
        : [`## ${s.date}`, ...speakerLines(s, '- ')].join('\n'),
    ),
  'date opening the first line, bullets kept': (g) =>
    joined(g, (s) =>
      speakerLines(s, '- ')
        .map((l, k) => (k === 0 ? `- ${s.date}, ${l.slice(2)}` : l))
        .join('\n'),
    ),
  'D: date opening the first line, no bullets': (g) =>
    joined(g, (s) =>
      speakerLines(s, '')
        .map((l, k) => (k === 0 ? `${s.date}, ${l}` : l))
        .join('\n'),
    ),
  'D, the date in brackets ([9 January] Name:)': (g) =>
    joined(g, (s) =>
      speakerLines(s, '')
        .map((l, k) => (k === 0 ? `[${s.date}] ${l}` : l))
        .join('\n'),
    ),
  'D2: one line per segment, both speakers': (g) =>
    joined(g, (s) => `${s.date}, ${speakerLines(s, '').join(' ')}`),
  'D2, a speaker by initial': (g) =>
    joined(g, (s) => `${s.date}, ${s.lines.map((l) => `${l.speaker[0]}: ${l.text}`).join(' ')}`),
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { set: { type: 'string', default: 'tune' }, ratio: { type: 'string', default: '8' } },
  });
  const ids = locomoSet(values.set);
  const counter = tokenCounterFor('gpt-4o');
  const totals = new Map<string, number>();
  let segments = 0;
  let lines = 0;
  for (const id of ids) {
    const { last } = await rollRealChat(loadRealChat(id), Number(values.ratio));
    const parsed = layoutSegments(last.summary?.text ?? '');
    segments += parsed.length;
    lines += parsed.reduce((n, s) => n + s.lines.length, 0);
    for (const [name, layout] of Object.entries(LAYOUTS))
      totals.set(name, (totals.get(name) ?? 0) + counter.countText(layout(parsed)));
  }
  const base = [...totals.values()][0]!;
  console.log(
    `${ids.length} last summaries at 1/${values.ratio}: ${segments} dated segments, ${lines} lines`,
  );
  console.log(
    textTable(
      ['layout', 'tokens', 'of main'],
      [...totals].map(([name, n]) => [name, String(n), `${((100 * n) / base).toFixed(1)}%`]),
    ),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
