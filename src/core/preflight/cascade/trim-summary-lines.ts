/**
 * Before the last resort cuts the newest message, the summary gives up its least valued lines,
 * only as many as make the newest fit whole, and none when that is not enough (the newest is
 * then cut as before, the summary kept whole). A summary's ids are worth more than the middle
 * of the newest tool result, its filler is not: a line is given up only when it holds nothing
 * a later turn needs.
 *
 * It works on the summary text by lines, whichever summarizer wrote it. Kept always: headings
 * (one goes only with every line of its section), the lines of the sections of what the user
 * asked and of the key identifiers (`## Task`, `## User instructions`, `## Key entities and
 * identifiers`), the `Note:` and archive lines, a line anyone but the assistant spoke (`user:
 * ...`, `Caroline: ...`; in another layout any labelled line, `Goal: ...`), and a line holding
 * an identifier (a path, a file, a ticket, a uuid, a code, a URL: `findIdentifiers`) that no
 * line staying holds (an excerpt repeating the path of its tool line may go: no id is lost).
 * Given up first: the built-in summarizer's excerpt lines (`- excerpt: ...`, text of folded
 * tool results that only fills room no other line could use), largest first; then a plain or
 * assistant's line holding no number and no word of an ask, a constraint or a decision (must,
 * never, only, because, decided, todo...), oldest first.
 */

import { findIdentifiers } from '../../language/key-identifiers.js';
import { releaseRegExpCode } from '../../process-caches.js';
import { KEY_IDS_TITLE } from '../../summary/embedded/types.js';
import { INSTRUCTIONS_TITLE, TASK_TITLE } from '../../summary/embedded/user-sections.js';

const HEADING = /^#{1,6}\s+(.+?)\s*$/;
const BULLET = /^\s*(?:[-*•]|\d{1,3}[.)])\s+/;
const EXCERPT = /^excerpt: /;
/** A speaker's line (`user: ...`, `Caroline: ...`), or a labelled line of another layout (`Goal: ...`). */
const SPEAKER = /^([\w.'’-]{1,30}(?: [\w.'’-]{1,20})?): /;
const KEPT_LINE = /^(?:Note: |Archived originals: )/;
const DIGIT = /\d/;
/** Words of an ask, a constraint, a decision or an open task: the line stays. */
const ASK_OR_COMMITMENT =
  /\b(?:must|never|do not|don't|only|always|decided|decision|instead of|rather than|because|todo|blocked|remaining|follow-up|next step|deadline|constraint|required|still open|should|please|user|asked|asks|wants|wanted|requested|goal|task)\b/i;
/** Sections whose every line stays. */
const KEPT_SECTIONS = new Set([TASK_TITLE, INSTRUCTIONS_TITLE, KEY_IDS_TITLE]);
/** Exact recounts before giving up (the estimate per line is close: one or two suffice). */
const MAX_RECOUNTS = 6;

/** A line the summary may give up, with its rank. */
export interface SummaryLineCandidate {
  index: number;
  /** 0: a filler excerpt; 1: a plain line. */
  tier: 0 | 1;
  /** Tokens of the line (`countText`), an estimate of what dropping it saves. */
  tokens: number;
}

/** A line's tier when it may be given up (ids aside), or undefined when it stays. */
function tierOf(line: string, keptSection: boolean): 0 | 1 | undefined {
  if (!line || keptSection || KEPT_LINE.test(line)) return undefined;
  if (EXCERPT.test(line)) return 0;
  const speaker = SPEAKER.exec(line)?.[1];
  if (speaker !== undefined && speaker.toLowerCase() !== 'assistant') return undefined;
  return DIGIT.test(line) || ASK_OR_COMMITMENT.test(line) ? undefined : 1;
}

/**
 * The lines of `body` the summary may give up, in the order it gives them up (see the file's
 * comment); a line holding an identifier only when a line that stays holds it too (an excerpt
 * repeating the path of its tool line). `countText` counts one line.
 */
export function droppableSummaryLines(
  body: string,
  countText: (text: string) => number,
): SummaryLineCandidate[] {
  const lines = body.split('\n');
  const tiers: (0 | 1 | undefined)[] = [];
  const keptIds = new Set<string>();
  let keptSection = false;
  for (const raw of lines) {
    const heading = HEADING.exec(raw);
    if (heading) keptSection = KEPT_SECTIONS.has(heading[1]!);
    const line = raw.replace(BULLET, '').trim();
    const tier = heading ? undefined : tierOf(line, keptSection);
    tiers.push(tier);
    if (tier === undefined) for (const found of findIdentifiers(line)) keptIds.add(found.text);
  }
  const out: SummaryLineCandidate[] = [];
  tiers.forEach((tier, index) => {
    if (tier === undefined) return;
    const raw = lines[index]!;
    if (!findIdentifiers(raw).every((found) => keptIds.has(found.text))) return;
    out.push({ index, tier, tokens: countText(raw) });
  });
  return out.sort((a, b) => a.tier - b.tier || (a.tier === 0 ? b.tokens - a.tokens : a.index - b.index));
}

/**
 * `lines` without those at `dropped`, and without a heading whose every line was dropped (a
 * heading that had no line before, a title over the next heading, stays).
 */
function withoutLines(lines: readonly string[], dropped: ReadonlySet<number>): string {
  const out: string[] = [];
  let heading = -1; // index in `out` of the open section's heading
  let emptied = false; // the open section lost a line and has none left so far
  const closeSection = () => {
    if (heading >= 0 && emptied) out.splice(heading, 1);
  };
  lines.forEach((line, index) => {
    if (HEADING.test(line)) {
      closeSection();
      heading = out.push(line) - 1;
      emptied = false;
    } else if (dropped.has(index)) {
      if (heading === out.length - 1) emptied = true;
    } else {
      out.push(line);
      if (line.trim()) emptied = false;
    }
  });
  closeSection();
  return out.join('\n');
}

/** What {@link trimSummaryLines} needs. */
export interface TrimSummaryInput {
  body: string;
  /** Tokens of the summary message of `body` as it stands. */
  tokens: number;
  /** Tokens the summary must give up. */
  excess: number;
  /** Tokens of one line of text. */
  countText: (text: string) => number;
  /** Tokens of the summary message of a body (tags and mark included). */
  countSummary: (body: string) => number;
}

/** A summary body after {@link trimSummaryLines}. */
export interface TrimmedSummary {
  body: string;
  /** Tokens of its summary message. */
  tokens: number;
  /** The lines given up (headings of emptied sections not counted). */
  linesGivenUp: number;
}

/**
 * `body` without its least valued lines, as few as free `excess` tokens, with the tokens of
 * its summary message; undefined when giving up every droppable line would not be enough.
 */
export function trimSummaryLines(input: TrimSummaryInput): TrimmedSummary | undefined {
  const { body, tokens, excess } = input;
  if (excess <= 0) return { body, tokens, linesGivenUp: 0 };
  const candidates = droppableSummaryLines(body, input.countText);
  if (candidates.length === 0) return undefined;
  const lines = body.split('\n');
  const dropped = new Set<number>();
  let next = 0;
  let saved = 0;
  for (let recount = 0; recount < MAX_RECOUNTS; recount++) {
    // Lines by the estimate until it covers what is still missing, then one exact count.
    while (next < candidates.length && saved < excess) {
      const candidate = candidates[next++]!;
      dropped.add(candidate.index);
      saved += candidate.tokens;
    }
    const trimmed = withoutLines(lines, dropped);
    const trimmedTokens = input.countSummary(trimmed);
    if (tokens - trimmedTokens >= excess) {
      return { body: trimmed, tokens: trimmedTokens, linesGivenUp: dropped.size };
    }
    if (next >= candidates.length) return undefined;
    // The exact saving so far: the next lines by the estimate cover what is still missing.
    saved = tokens - trimmedTokens;
  }
  return undefined;
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(HEADING, BULLET, EXCERPT, SPEAKER, KEPT_LINE, DIGIT, ASK_OR_COMMITMENT);
