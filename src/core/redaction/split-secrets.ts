import { REDACTED } from './replace-match.js';

/** A redactor (`Redactor` of redactor.ts, named here so the two files do not import each other). */
type Redactor = (text: string) => string;

/**
 * Secrets split over two adjacent text blocks of one message (`[{text: 'token ghp_AAAA'},
 * {text: 'BBBB...'}]`): each block redacted alone lets the half without a prefix out whole.
 * Each seam is scanned once more, the last {@link SEAM_WINDOW} characters of one block joined
 * to the first of the next; when a match there crosses the seam, its part on each side is
 * replaced too. The cost is bounded: one scan of at most 2 * SEAM_WINDOW characters per seam.
 */

/** Characters scanned on each side of a seam between two text blocks. */
export const SEAM_WINDOW = 256;

/** Characters the two strings share at their start. */
function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Characters the two strings share at their end, at most `max`. */
function commonSuffix(a: string, b: string, max: number): number {
  let i = 0;
  while (i < max && a.charCodeAt(a.length - 1 - i) === b.charCodeAt(b.length - 1 - i)) i++;
  return i;
}

/** How many characters of `a`'s end and `b`'s start a match across their seam covers. */
export type SeamCut = readonly [before: number, after: number];

/**
 * The cut of the seam between `a` and `b`, or undefined when no match crosses it (a change
 * that redacting the two windows apart gives too is not a crossing one).
 */
export function seamCut(a: string, b: string, redact: Redactor): SeamCut | undefined {
  if (a.length === 0 || b.length === 0) return undefined;
  const tail = a.length > SEAM_WINDOW ? a.slice(a.length - SEAM_WINDOW) : a;
  const head = b.length > SEAM_WINDOW ? b.slice(0, SEAM_WINDOW) : b;
  const joined = tail + head;
  const out = redact(joined);
  if (out === joined || out === redact(tail) + redact(head)) return undefined;
  const first = commonPrefix(joined, out);
  const end = joined.length - commonSuffix(joined, out, Math.min(joined.length, out.length) - first);
  // A change the join caused that starts or ends short of the seam (`password=` | ` hunter2`)
  // is cut from the seam, the few characters between included.
  if (end <= first) return undefined;
  return [Math.max(0, tail.length - first), Math.max(0, end - tail.length)];
}

/**
 * `redacted` (the redaction of `original`) with its first `front` and last `back` characters of
 * the original replaced too; where the redaction already changed that part, what it left is kept.
 */
function cutPiece(original: string, redacted: string, front: number, back: number): string {
  if (front === 0 && back === 0) return redacted;
  let lead: number;
  let trail: number;
  if (redacted === original) {
    if (front + back >= original.length) return REDACTED;
    lead = front;
    trail = back;
  } else {
    const prefix = commonPrefix(original, redacted);
    lead = Math.min(front, prefix);
    trail = Math.min(
      back,
      commonSuffix(original, redacted, Math.min(original.length, redacted.length) - prefix),
    );
  }
  const middle = redacted.slice(lead, redacted.length - trail);
  return `${front > 0 ? REDACTED : ''}${middle}${back > 0 ? REDACTED : ''}`;
}

/** Redacts adjacent pieces of one text, each alone and across each seam (`cuts[i]`: seam i, i + 1). */
export function redactPieces(
  pieces: readonly string[],
  redact: Redactor,
  cuts: readonly (SeamCut | undefined)[] = seamCuts(pieces, redact),
): string[] {
  return pieces.map((piece, i) =>
    cutPiece(piece, redact(piece), i > 0 ? (cuts[i - 1]?.[1] ?? 0) : 0, cuts[i]?.[0] ?? 0),
  );
}

function seamCuts(pieces: readonly string[], redact: Redactor): (SeamCut | undefined)[] {
  const cuts: (SeamCut | undefined)[] = [];
  for (let i = 0; i + 1 < pieces.length; i++) cuts.push(seamCut(pieces[i]!, pieces[i + 1]!, redact));
  return cuts;
}

/** The text of a content block (`{type: 'text', text}`, `input_text`, `output_text`), if it is one. */
function blockText(item: unknown): string | undefined {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
  const text = (item as { text?: unknown }).text;
  return typeof text === 'string' ? text : undefined;
}

/**
 * After `redactDeep` redacted an array item by item (`out`), the text blocks of `source` next
 * to each other redacted across their seams too.
 */
export function redactBlockSeams(source: readonly unknown[], out: unknown[], redact: Redactor): void {
  for (let i = 0; i + 1 < source.length; i++) {
    const a = blockText(source[i]);
    const b = a === undefined ? undefined : blockText(source[i + 1]);
    if (a === undefined || b === undefined) continue;
    const cut = seamCut(a, b, redact);
    if (!cut) continue;
    out[i] = withText(out[i], (text) => cutPiece(a, text, 0, cut[0]));
    out[i + 1] = withText(out[i + 1], (text) => cutPiece(b, text, cut[1], 0));
  }
}

/** A copy of a redacted block with its text changed (an item seen twice is one shared copy). */
function withText(item: unknown, change: (text: string) => string): unknown {
  const text = blockText(item);
  if (text === undefined) return item;
  return { ...(item as object), text: change(text) };
}

/**
 * The two sides of a seam between adjacent text blocks (at most {@link SEAM_WINDOW} characters
 * each), and the array they are in: `group` 0 is the message's own blocks, n the n-th block
 * with blocks of its own, whose `owner` is its `tool_use_id` (a tool result's call id).
 */
export interface BlockSeam {
  tail: string;
  head: string;
  group: number;
  owner?: string;
}

/** A seam a match crosses, to be found again in a text joined from the blocks. */
export interface Seam {
  needle: string;
  at: number;
  cut: SeamCut;
  group: number;
  owner?: string;
}

/**
 * The seams of a wire message's adjacent text blocks (its `content` or `output` array and the
 * `content` arrays of its blocks, as Anthropic's `tool_result`), in order.
 */
export function blockSeams(raw: unknown): BlockSeam[] {
  const seams: BlockSeam[] = [];
  if (raw === null || typeof raw !== 'object') return seams;
  const record = raw as { content?: unknown; output?: unknown };
  const top = Array.isArray(record.content)
    ? record.content
    : Array.isArray(record.output)
      ? record.output
      : [];
  pushSeams(seams, top, 0, undefined);
  let group = 0;
  for (const item of top) {
    if (item === null || typeof item !== 'object') continue;
    const { content, tool_use_id: owner } = item as { content?: unknown; tool_use_id?: unknown };
    if (Array.isArray(content))
      pushSeams(seams, content, ++group, typeof owner === 'string' ? owner : undefined);
  }
  return seams;
}

function pushSeams(
  seams: BlockSeam[],
  blocks: readonly unknown[],
  group: number,
  owner: string | undefined,
): void {
  for (let i = 0; i + 1 < blocks.length; i++) {
    const a = blockText(blocks[i]);
    const b = a === undefined ? undefined : blockText(blocks[i + 1]);
    if (!a || !b) continue;
    const seam: BlockSeam = {
      tail: a.slice(Math.max(0, a.length - SEAM_WINDOW)),
      head: b.slice(0, SEAM_WINDOW),
      group,
    };
    if (owner !== undefined) seam.owner = owner;
    seams.push(seam);
  }
}

/** The seams a match crosses. */
export function crossingSeams(seams: readonly BlockSeam[], redact: Redactor): Seam[] {
  const found: Seam[] = [];
  for (const { tail, head, group, owner } of seams) {
    const cut = seamCut(tail, head, redact);
    if (!cut) continue;
    const seam: Seam = { needle: `${tail}\n${head}`, at: tail.length, cut, group };
    if (owner !== undefined) seam.owner = owner;
    found.push(seam);
  }
  return found;
}

/**
 * Redacts a text joined from a message's blocks with newlines (`message.text`, a tool result's
 * output, an archived transcript), cut at the crossing `seams` ({@link crossingSeams}) found
 * in it, in order, so each is redacted across; without one, `whole` redacts it. A seam not found
 * skips the rest of its group (a text holds a group whole or not at all), so the text is
 * searched at most once more per group.
 */
export function redactJoined(
  text: string,
  seams: readonly Seam[],
  redact: Redactor,
  whole: Redactor = redact,
): string {
  if (seams.length === 0) return whole(text);
  const pieces: string[] = [];
  const cuts: SeamCut[] = [];
  let from = 0;
  let skipped: number | undefined;
  for (const seam of seams) {
    if (seam.group === skipped) continue;
    const found = text.indexOf(seam.needle, from);
    if (found < 0) {
      skipped = seam.group;
      continue;
    }
    pieces.push(text.slice(from, found + seam.at));
    cuts.push(seam.cut);
    from = found + seam.at + 1;
  }
  if (pieces.length === 0) return whole(text);
  pieces.push(text.slice(from));
  return redactPieces(pieces, redact, cuts).join('\n');
}
