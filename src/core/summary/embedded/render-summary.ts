/**
 * Layout: key identifiers first, then the segments oldest first, one heading per segment,
 * consecutive units of one speaker on one line, tool facts on their own lines. The body
 * never carries `<COMPACT-SUMMARY>` markup: a line that would is left out.
 */

import { releaseRegExpCode } from '../../process-caches.js';
import { MONTHS } from './segments.js';
import { KEY_IDS_TITLE, type Segment, type Unit } from './types.js';

/** `8 May`: a heading's date in the year of the heading before it. */
export function shortDate(date: Date): string {
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]}`;
}

/** The tag, raw or defused (`[COMPACT-SUMMARY`: a forged tag defused before the summarizer). */
const MARKUP = /[<[]\/?compact-summary/i;

/** Renders the summary body. */
export function renderSummary(options: {
  segments: readonly Segment[];
  units: Iterable<Unit>;
  ids: readonly string[];
  note?: string | undefined;
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
  let year: number | undefined;
  options.segments.forEach((segment, index) => {
    const list = bySegment.get(index);
    if (!list || list.length === 0) return;
    // A date in the year of the heading before it omits the year (read back by parsePrevious).
    const label =
      segment.date && segment.date.getUTCFullYear() === year ? shortDate(segment.date) : segment.label;
    year = segment.date?.getUTCFullYear();
    list.sort((a, b) => a.order - b.order);
    const lines: string[] = [];
    let speaker: string | undefined;
    for (const unit of list) {
      if (!unit.tool && unit.speaker === speaker && lines.length > 0) {
        lines[lines.length - 1] += ` ${unit.text}`;
        continue;
      }
      speaker = unit.tool ? undefined : unit.speaker;
      lines.push(unit.tool || !unit.speaker ? `- ${unit.text}` : `- ${unit.speaker}: ${unit.text}`);
    }
    parts.push(`## ${label}\n${lines.join('\n')}`);
  });
  return parts
    .join('\n')
    .split('\n')
    .filter((line) => !MARKUP.test(line))
    .join('\n');
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(MARKUP);
