/**
 * Layout: key identifiers first, then the segments oldest first, consecutive units of one
 * speaker on one line, tool facts on their own lines. A segment opens with a heading
 * (`## 8 May 2023`, then `- Name: text` lines); between people (`people`) the lines sit under
 * one `## Conversation` heading, without bullets, and a dated segment's date opens its first
 * line (`8 May 2023, Caroline: text`, then `Melanie: text`): a heading and a bullet per line
 * were a tenth of the summary there. `parsePrevious` reads both layouts back. The body never
 * carries `<COMPACT-SUMMARY>` markup: a line that would is left out.
 */

import { releaseRegExpCode } from '../../process-caches.js';
import { MONTHS } from './segments.js';
import { KEY_IDS_TITLE, type Segment, UNDATED_LABEL, type Unit } from './types.js';

/** `8 May`: a heading's date in the year of the heading before it. */
export function shortDate(date: Date): string {
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]}`;
}

/** The tag, raw or defused (`[COMPACT-SUMMARY`: a forged tag defused before the summarizer). */
const MARKUP = /[<[]\/?compact-summary/i;

/** One segment's lines: a speaker's consecutive units on one line (`bullet` before each). */
function segmentLines(list: Unit[], bullet: string): string[] {
  list.sort((a, b) => a.order - b.order);
  const lines: string[] = [];
  let speaker: string | undefined;
  for (const unit of list) {
    if (!unit.tool && unit.speaker === speaker && lines.length > 0) {
      lines[lines.length - 1] += ` ${unit.text}`;
      continue;
    }
    speaker = unit.tool ? undefined : unit.speaker;
    lines.push(unit.tool || !unit.speaker ? `- ${unit.text}` : `${bullet}${unit.speaker}: ${unit.text}`);
  }
  return lines;
}

/** Renders the summary body. */
export function renderSummary(options: {
  segments: readonly Segment[];
  units: Iterable<Unit>;
  ids: readonly string[];
  note?: string | undefined;
  /** A chat between people: the dense layout (see the file comment). */
  people?: boolean;
}): string {
  const parts: string[] = [];
  if (options.note) parts.push(`Note: ${options.note}`);
  if (options.ids.length > 0)
    parts.push(`## ${KEY_IDS_TITLE}\n${options.ids.map((id) => `- ${id}`).join('\n')}`);
  const bySegment = new Map<number, Unit[]>();
  for (const unit of options.units) {
    const list = bySegment.get(unit.segment) ?? [];
    list.push(unit);
    bySegment.set(unit.segment, list);
  }
  const people = options.people === true;
  if (people && bySegment.size > 0) parts.push(`## ${UNDATED_LABEL}`);
  let year: number | undefined;
  let first = true;
  options.segments.forEach((segment, index) => {
    const list = bySegment.get(index);
    if (!list || list.length === 0) return;
    // A date in the year of the heading before it omits the year (read back by parsePrevious).
    const label =
      segment.date && segment.date.getUTCFullYear() === year ? shortDate(segment.date) : segment.label;
    year = segment.date?.getUTCFullYear();
    const lines = segmentLines(list, people ? '' : '- ');
    // Between people a dated segment's first line carries its date (a speaker's line: one
    // without a speaker keeps the heading, so the date is read back as the segment's).
    if (people && segment.date && /^[^-\s]/.test(lines[0]!)) lines[0] = `${label}, ${lines[0]}`;
    // The undated segment opening the chat sits under the section's own heading.
    else if (!people || !first || segment.label !== UNDATED_LABEL) parts.push(`## ${label}`);
    first = false;
    parts.push(lines.join('\n'));
  });
  return parts
    .join('\n')
    .split('\n')
    .filter((line) => !MARKUP.test(line))
    .join('\n');
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(MARKUP);
