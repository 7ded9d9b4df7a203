/**
 * The previous summary, parsed back into its segments, units and key identifiers, so its
 * units compete with the new ones and rolling compaction does not decay. Reads this
 * summarizer's own layout (`## heading`, `- Speaker: text`, `- tool(args) → outcome`) and
 * takes any other text (an older layout, an LLM's summary) as undated units.
 */

import { findIdentifiers } from '../../language/key-identifiers.js';
import { releaseRegExpCode } from '../../process-caches.js';
import type { Steps } from '../../time-slice.js';
import { findDate, formatDate } from './segments.js';
import { isStateChanging } from './tool-facts.js';
import {
  EXCERPT_SPEAKER,
  KEY_IDS_TITLE,
  type Segment,
  UNDATED_LABEL,
  type Unit,
  type UnitSource,
} from './types.js';
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

/** A heading's date without its year (`8 May`: the year of the heading before it). */
const SHORT_DATE = /^(\d{1,2}) ([A-Z][a-z]{2,8})$/;

function segmentFor(heading: string, year: number | undefined): Segment {
  const short = year === undefined ? null : SHORT_DATE.exec(heading);
  const found = findDate(short ? `${heading} ${year}` : heading);
  if (short && found) return { label: formatDate(found.date), date: found.date };
  // A heading that is a date (and little else) opens a dated segment.
  if (found && heading.length <= found.length + 4) return { label: formatDate(found.date), date: found.date };
  return { label: heading };
}

function sourceOf(speaker: string): UnitSource {
  return speaker === 'user' || speaker === 'assistant' ? speaker : 'summary';
}

/** Parses `body` (a summary body, without its tags); `prose`: a chat, no tool call (its clauses as `textUnits` cuts them). */
export function parsePrevious(body: string | undefined, prose = false): PreviousSummary {
  const out: PreviousSummary = { segments: [], units: [], ids: [] };
  if (!body?.trim()) return out;
  let segment = -1;
  let inIds = false;
  let order = PREVIOUS_ORDER;
  let year: number | undefined;
  const openSegment = (next: Segment) => {
    const known = out.segments.findIndex((s) => s.label === next.label);
    segment = known >= 0 ? known : out.segments.push(next) - 1;
  };
  for (const raw of body.split('\n')) {
    const heading = HEADING.exec(raw);
    if (heading) {
      inIds = heading[1] === KEY_IDS_TITLE;
      if (!inIds) {
        const next = segmentFor(heading[1]!, year);
        year = next.date?.getUTCFullYear() ?? year;
        openSegment(next);
      }
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
    const filler = who === EXCERPT_SPEAKER ? { filler: true as const } : {};
    for (const unit of textUnits(rest, prose))
      out.units.push({
        ...unit,
        speaker: who,
        source: sourceOf(who),
        segment,
        order: order++,
        value: 0,
        ...filler,
      });
  }
  return out;
}

/** `name(arguments)` of a tool fact line, and its outcome. */
function toolParts(text: string): { signature: string; outcome: string } | undefined {
  const arrow = text.indexOf(' → ');
  return arrow < 0 ? undefined : { signature: text.slice(0, arrow), outcome: text.slice(arrow + 3) };
}

/** An outcome without its `(N calls)` count (echo lines of one tool and target). */
const withoutCount = (outcome: string) => outcome.replace(/ \(\d+ calls\)$/, '');

/**
 * Marks the tool lines of the previous summary that a later line supersedes, across rounds as
 * within one: a read-only call repeated with the same key arguments (a file reread, tests
 * rerun) whose earlier result named no id the later one lacks, or the same line again (an
 * echo of one tool and target). Without it, a rerun's old result held its place in every
 * later version. A pause every few dozen units.
 */
export function* supersedeCarriedSteps(units: readonly Unit[]): Steps<void> {
  const latest = new Map<string, Unit>();
  let work = 0;
  for (let i = units.length - 1; i >= 0; i--) {
    if (++work % 64 === 0) yield;
    const unit = units[i]!;
    if (!unit.tool) continue;
    const parts = toolParts(unit.text);
    if (!parts) continue;
    const later = latest.get(parts.signature);
    if (!later) {
      latest.set(parts.signature, unit);
      continue;
    }
    // Only the previous summary's lines (negative orders): new facts were judged by toolFacts.
    if (unit.order >= 0 || unit.tool.superseded) continue;
    const laterOutcome = toolParts(later.text)!.outcome;
    const same = withoutCount(parts.outcome) === withoutCount(laterOutcome);
    if (
      same ||
      (!unit.tool.stateChanging &&
        findIdentifiers(unit.text).every((found) => later.text.includes(found.text)))
    )
      unit.tool.superseded = true;
  }
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(HEADING, BULLET, TOOL_LINE, SPEAKER, FAILED, SHORT_DATE);
