import { commonPrefix, commonSuffix, cutPiece } from './cut-piece.js';

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

/**
 * True when the tail window may cut off the start of a secret that crosses the seam: a run with
 * no whitespace (a long token's middle, its prefix further back), or a PEM block's end in the
 * head with its BEGIN line further back than the tail.
 */
function headless(tail: string, head: string): boolean {
  if (!/\s/.test(tail)) return true;
  return head.includes('-----END') && !tail.includes('-----BEGIN');
}

/** True when `text` has a whitespace character in `[from, to)`. */
function hasBlank(text: string, from: number, to: number): boolean {
  for (let at = from; at < to; at++) {
    const code = text.charCodeAt(at);
    if (code <= 0x20 || code === 0xa0 || code === 0x2028 || code === 0x2029 || code === 0x3000) return true;
  }
  return false;
}

/** How many characters of `a`'s end and `b`'s start a match across their seam covers. */
export type SeamCut = readonly [before: number, after: number];

/**
 * The cut of the seam between `a` and `b`, or undefined when no match crosses it (a change
 * that redacting the two windows apart gives too is not a crossing one).
 */
export function seamCut(a: string, b: string, redact: Redactor): SeamCut | undefined {
  if (a.length === 0 || b.length === 0) return undefined;
  // A match that reaches a window's edge may go on past it (a PEM body or a long token with
  // more than SEAM_WINDOW characters on one side): that side is read again four times wider,
  // up to the whole text, so the windows scanned add up to less than 4/3 of the widest.
  let before = SEAM_WINDOW;
  let after = SEAM_WINDOW;
  for (;;) {
    const tail = a.length > before ? a.slice(a.length - before) : a;
    const head = b.length > after ? b.slice(0, after) : b;
    if (tail.length < a.length && headless(tail, head)) {
      before *= 4;
      continue;
    }
    const joined = tail + head;
    const out = redact(joined);
    if (out === joined || out === redact(tail) + redact(head)) return undefined;
    const first = commonPrefix(joined, out);
    const end = joined.length - commonSuffix(joined, out, Math.min(joined.length, out.length) - first);
    // A change the join caused that starts or ends short of the seam (`password=` | ` hunter2`)
    // is cut from the seam, the few characters between included.
    if (end <= first) return undefined;
    // A match that ends near a window's edge with no blank after it may be cut short by it
    // (gitlab's routable token, `glpat-...` then `.2yclr50mo`: a window ending at `.2` took the
    // token without its suffix, which went out, secrets-88); one that starts near the start
    // with no blank before it too.
    const growTail = tail.length < a.length && !hasBlank(joined, 0, first);
    const growHead = head.length < b.length && !hasBlank(joined, end, joined.length);
    if (!growTail && !growHead) return [Math.max(0, tail.length - first), Math.max(0, end - tail.length)];
    if (growTail) before *= 4;
    if (growHead) after *= 4;
  }
}

/** Redacts adjacent pieces of one text, each alone and across each seam (`cuts[i]`: seam i, i + 1). */
export function redactPieces(
  pieces: readonly string[],
  redact: Redactor,
  cuts: readonly (SeamCut | undefined)[] = seamCuts(pieces, redact),
): string[] {
  return pieces.map((piece, i) =>
    cutPiece(piece, redact(piece), i > 0 ? (cuts[i - 1]?.[1] ?? 0) : 0, cuts[i]?.[0] ?? 0, redact),
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

/** Where a text sits in an item: a path of keys and indices, and the text. */
interface Edge {
  readonly path: readonly (string | number)[];
  readonly text: string;
}

/**
 * The text at one end of an array item: a block's `text`, or a message's `content` (or a tool
 * output's `output`) when it is a string, else the first or last item of that array, three
 * levels deep at most (a message, its `tool_result`, its text block). Two adjacent messages
 * (a key pasted over two user turns, a tool's output streamed into two tool results) meet at
 * the last text of one and the first text of the next.
 */
function edgeOf(item: unknown, last: boolean, depth = 0): Edge | undefined {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
  const record = item as { text?: unknown; content?: unknown; output?: unknown };
  if (typeof record.text === 'string') return { path: ['text'], text: record.text };
  const key = record.content !== undefined ? 'content' : 'output';
  const inner = record[key];
  if (typeof inner === 'string') return { path: [key], text: inner };
  if (!Array.isArray(inner) || inner.length === 0 || depth >= 2) return undefined;
  const index = last ? inner.length - 1 : 0;
  const edge = edgeOf(inner[index], last, depth + 1);
  return edge && { path: [key, index, ...edge.path], text: edge.text };
}

/**
 * After `redactDeep` redacted an array item by item (`out`), the texts of adjacent items
 * (text blocks, messages, tool results) redacted across their seams too.
 */
export function redactBlockSeams(source: readonly unknown[], out: unknown[], redact: Redactor): void {
  for (let i = 0; i + 1 < source.length; i++) {
    const a = edgeOf(source[i], true);
    if (!a) continue;
    // Items with no text between (an assistant's tool call alone) are read past: the halves
    // of a key on both sides of a call meet in the model's reading.
    let k = i + 1;
    while (k < source.length - 1 && k - i <= 4 && isCallOnly(source[k])) k++;
    const b = edgeOf(source[k], false);
    if (!b) continue;
    const cut = seamCut(a.text, b.text, redact);
    if (!cut) continue;
    out[i] = withTextAt(out[i], a.path, (text) => cutPiece(a.text, text, 0, cut[0], redact));
    out[k] = withTextAt(out[k], b.path, (text) => cutPiece(b.text, text, cut[1], 0, redact));
  }
}

/** A wire item that is tool calls and no text (`tool_calls` with null content, a `function_call` item). */
function isCallOnly(item: unknown): boolean {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return false;
  const record = item as { content?: unknown; tool_calls?: unknown; type?: unknown };
  if (record.type === 'function_call') return true;
  if (!Array.isArray(record.tool_calls) || record.tool_calls.length === 0) return false;
  return record.content === null || record.content === undefined || record.content === '';
}

/**
 * A copy of a redacted item with the text at `path` changed, copied along the path (an item seen
 * twice is one shared copy); an item whose redaction has another shape is kept.
 */
function withTextAt(
  item: unknown,
  path: readonly (string | number)[],
  change: (text: string) => string,
): unknown {
  if (path.length === 0) return typeof item === 'string' ? change(item) : item;
  if (item === null || typeof item !== 'object') return item;
  const [step, ...rest] = path;
  const copy = (Array.isArray(item) ? [...item] : { ...item }) as Record<string | number, unknown>;
  if (!Object.hasOwn(copy, step!)) return item;
  copy[step!] = withTextAt(copy[step!], rest, change);
  return copy;
}

/**
 * The two sides of a seam between adjacent text blocks (whole: {@link seamCut} reads
 * {@link SEAM_WINDOW} characters each, more where a match reaches that far), and the array they are in: `group` 0 is the message's own blocks, n the n-th block
 * with blocks of its own, whose `owner` is its `tool_use_id` (a tool result's call id).
 */
export interface BlockSeam {
  tail: string;
  head: string;
  group: number;
  owner?: string;
  /**
   * What the joined text holds between the two sides (`\n` unless said: a transcript of
   * messages writes the next one's header there, `\n[5] user: `).
   */
  joiner?: string;
  /**
   * Set when a side meets a message the text does not hold (an archived original of one
   * message; `sum-vN`, whose folded messages have a kept or pinned one before, between or
   * after them): the text each side meets instead of the other (`''`: none). `tail` is `''` at
   * the text's start (`joiner` is then what comes before `head`), `head` `''` at its end.
   */
  outside?: { afterTail: string; beforeHead: string };
  /**
   * Where `tail` starts in the text the seam is found in, when known: {@link blockSeams} gives
   * it in the text of the seam's group (its blocks joined with `\n`) when every block before
   * `tail` is a text block; a caller that embeds that text in a longer one moves it there.
   * {@link redactJoined} cuts the seam there when the text holds it there, and searches for it
   * only when not (an equal text earlier, a whole token printed before one split in two, would
   * be found first).
   */
  start?: number;
}

/** A seam a match crosses, to be found again in a text joined from the blocks. */
export interface Seam {
  needle: string;
  at: number;
  cut: SeamCut;
  group: number;
  owner?: string;
  joiner?: string;
  /** Where `needle` starts in the text, when known ({@link BlockSeam.start}). */
  start?: number;
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
  // Where block i starts in the blocks' joined text, while every block before it is a text block.
  let start: number | undefined = 0;
  for (let i = 0; i + 1 < blocks.length; i++) {
    const a = blockText(blocks[i]);
    const b = a === undefined ? undefined : blockText(blocks[i + 1]);
    if (a && b) {
      const seam: BlockSeam = { tail: a, head: b, group };
      if (owner !== undefined) seam.owner = owner;
      if (start !== undefined) seam.start = start;
      seams.push(seam);
    }
    start = start !== undefined && a !== undefined ? start + a.length + 1 : undefined;
  }
}

/** The seams a match crosses. */
export function crossingSeams(seams: readonly BlockSeam[], redact: Redactor): Seam[] {
  const found: Seam[] = [];
  for (const { tail, head, group, owner, joiner = '\n', outside, start } of seams) {
    const cut = outside ? outsideCut(tail, head, outside, redact) : seamCut(tail, head, redact);
    if (!cut) continue;
    const seam: Seam = { needle: `${tail}${joiner}${head}`, at: tail.length, cut, group };
    if (owner !== undefined) seam.owner = owner;
    if (joiner !== '\n') seam.joiner = joiner;
    if (start !== undefined) seam.start = start;
    found.push(seam);
  }
  return found;
}

/** The cut of a seam whose sides meet texts outside the text (`BlockSeam.outside`), if any. */
function outsideCut(
  tail: string,
  head: string,
  { afterTail, beforeHead }: NonNullable<BlockSeam['outside']>,
  redact: Redactor,
): SeamCut | undefined {
  const before = seamCut(tail, afterTail, redact)?.[0] ?? 0;
  const after = seamCut(beforeHead, head, redact)?.[1] ?? 0;
  return before === 0 && after === 0 ? undefined : [before, after];
}

/**
 * Where `seam`'s needle is in `text`, at `from` or after: its `start` when the text holds it
 * there, else (no start, or the text laid out otherwise) the first place it is found, or -1.
 */
function seamAt(text: string, seam: Seam, from: number): number {
  const { start, needle } = seam;
  if (start !== undefined && start >= from && text.startsWith(needle, start)) return start;
  return text.indexOf(needle, from);
}

/**
 * Redacts a text joined from a message's blocks with newlines (`message.text`, a tool result's
 * output, an archived transcript), cut at the crossing `seams` ({@link crossingSeams}) found
 * in it, in order, so each is redacted across; without one, `whole` redacts it. A seam is cut
 * where its `start` says when the text holds it there (secrets-88: the first place it was found
 * could be an earlier equal text, and the seam's halves went out whole); one without is searched
 * for. A seam not found skips the rest of its group (a text holds a group whole or not at all),
 * so the text is searched at most once more per group. What a seam's joiner holds (a
 * transcript's headers and tool calls) is redacted alone.
 */
export function redactJoined(
  text: string,
  seams: readonly Seam[],
  redact: Redactor,
  whole: Redactor = redact,
): string {
  if (seams.length === 0) return whole(text);
  const pieces: string[] = [];
  const joiners: string[] = [];
  const cuts: SeamCut[] = [];
  let from = 0;
  let skipped: number | undefined;
  for (const seam of seams) {
    if (seam.group === skipped) continue;
    const found = seamAt(text, seam, from);
    if (found < 0) {
      skipped = seam.group;
      continue;
    }
    const joiner = seam.joiner ?? '\n';
    pieces.push(text.slice(from, found + seam.at));
    joiners.push(joiner);
    cuts.push(seam.cut);
    from = found + seam.at + joiner.length;
  }
  if (pieces.length === 0) return whole(text);
  pieces.push(text.slice(from));
  const redacted = redactPieces(pieces, redact, cuts);
  let out = redacted[0]!;
  for (let i = 1; i < redacted.length; i++) out += redact(joiners[i - 1]!) + redacted[i]!;
  return out;
}
