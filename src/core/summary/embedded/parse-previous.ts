/**
 * The previous summary, parsed back into its segments, units and key identifiers, so its
 * units compete with the new ones and rolling compaction does not decay. Reads this
 * summarizer's own layout (`## heading`, `- Speaker: text`, `- tool(args) → outcome`) and
 * takes any other text (an older layout, an LLM's summary) as undated units.
 */

import { findDate, formatDate } from './segments.js';
import { isStateChanging } from './tool-facts.js';
import { KEY_IDS_TITLE, type Segment, UNDATED_LABEL, type Unit, type UnitSource } from './types.js';
import { contentWords, textUnits } from './units.js';

/** What a previous summary holds. */
export interface PreviousSummary {
  segments: Segment[];
  /** Units with `value` 0 (scoring sets it), in the summary's order (negative `order`s). */
  units: Unit[];
  /** The key identifiers it listed. */
  ids: string[];
}

const HEADING = /^#{1,3}\s+(.+?)\s*$/;
const BULLET = /^\s*[-*•]\s+/;
const TOOL_LINE = /^([\w.:/-]{1,64})\((.*)\) → (.*)$/;
const SPEAKER = /^([\w.'’-]{1,30}(?: [\w.'’-]{1,20})?): /;
const FAILED = /\b(?:error|exception|failed|failure|denied|not found|invalid|declined|timed out)\b/i;
/** Units from the previous summary sit before every new unit. */
const PREVIOUS_ORDER = -1_000_000;

function segmentFor(heading: string): Segment {
  const found = findDate(heading);
  // A heading that is a date (and little else) opens a dated segment.
  if (found && heading.length <= found.length + 4) return { label: formatDate(found.date), date: found.date };
  return { label: heading };
}

function sourceOf(speaker: string): UnitSource {
  return speaker === 'user' || speaker === 'assistant' ? speaker : 'summary';
}

/** Parses `body` (a summary body, without its tags). */
export function parsePrevious(body: string | undefined): PreviousSummary {
  const out: PreviousSummary = { segments: [], units: [], ids: [] };
  if (!body?.trim()) return out;
  let segment = -1;
  let inIds = false;
  let order = PREVIOUS_ORDER;
  const openSegment = (next: Segment) => {
    const known = out.segments.findIndex((s) => s.label === next.label);
    segment = known >= 0 ? known : out.segments.push(next) - 1;
  };
  for (const raw of body.split('\n')) {
    const heading = HEADING.exec(raw);
    if (heading) {
      inIds = heading[1] === KEY_IDS_TITLE;
      if (!inIds) openSegment(segmentFor(heading[1]!));
      continue;
    }
    const line = raw.replace(BULLET, '').trim();
    if (!line || line.startsWith('Note: ')) continue;
    if (inIds) {
      out.ids.push(line);
      continue;
    }
    if (segment < 0) openSegment({ label: UNDATED_LABEL });
    const tool = TOOL_LINE.exec(line);
    if (tool) {
      out.units.push({
        text: line,
        speaker: tool[1]!,
        source: 'tool',
        segment,
        order: order++,
        words: contentWords(line),
        tool: {
          stateChanging: isStateChanging(tool[1]!),
          failed: FAILED.test(tool[3]!),
          scratch: false,
          superseded: false,
        },
        value: 0,
      });
      continue;
    }
    const speaker = SPEAKER.exec(line);
    const who = speaker ? speaker[1]! : '';
    const rest = speaker ? line.slice(speaker[0].length) : line;
    for (const unit of textUnits(rest))
      out.units.push({ ...unit, speaker: who, source: sourceOf(who), segment, order: order++, value: 0 });
  }
  return out;
}
