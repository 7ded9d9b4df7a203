import type { CompactMessage } from '../messages/message.js';
import { TimeSlice } from '../time-slice.js';
import { cutPiece } from './cut-piece.js';
import { redactBlockSeams, seamCut } from './split-secrets.js';

/** A redactor (`Redactor` of redactor.ts, named here so the two files do not import each other). */
type Redactor = (text: string) => string;

/**
 * A secret split over two messages (a key pasted in two user turns, a tool's output streamed
 * into two tool results): each message redacted alone lets the half without a prefix out, yet
 * the summarizer reads the messages as one transcript. Each seam between two adjacent messages
 * (the last text of one, the first of the next, at most `SEAM_WINDOW` characters each) is
 * scanned once more, and a match that crosses it is replaced on both sides, in the parsed
 * texts and in the wire form (`raw`) alike.
 */

/** Which text of a message a seam meets: its own text, or the tool result at `result`. */
type Piece = { kind: 'text' } | { kind: 'result'; result: number };

/**
 * The last text of a message (its last tool result, else its text, tool calls after it or not:
 * a model reads `token ghp_AAAA` + a call + the result `BBBB...` as one key), or undefined.
 */
function endPiece(message: CompactMessage): Piece | undefined {
  if (message.toolResults.length > 0) return { kind: 'result', result: message.toolResults.length - 1 };
  return message.text !== '' ? { kind: 'text' } : undefined;
}

/** The first text of a message (its text, else its first tool result), or undefined. */
function startPiece(message: CompactMessage): Piece | undefined {
  if (message.text !== '') return { kind: 'text' };
  return message.toolResults.length > 0 ? { kind: 'result', result: 0 } : undefined;
}

/** A message with tool calls and no text a seam reads (an assistant's call alone): skipped over. */
function callsOnly(message: CompactMessage): boolean {
  return message.text === '' && message.toolResults.length === 0 && message.toolCalls.length > 0;
}

/** The index of the message after `i` whose first text meets `i`'s last, past calls-only ones. */
export function nextTextual(messages: readonly CompactMessage[], i: number): number {
  let j = i + 1;
  while (j < messages.length - 1 && j - i <= MAX_SKIPPED && callsOnly(messages[j]!)) j++;
  return j;
}

/** How many calls-only messages a seam reaches over. */
const MAX_SKIPPED = 4;

/** The parsed fields a seam between messages reads. */
type MessageTexts = Pick<CompactMessage, 'text' | 'toolCalls' | 'toolResults'>;

/**
 * The last (`end`) or first text of a message, as a transcript or an archived original shows it
 * (text, then tool calls, then tool results), or undefined when a tool call is there.
 */
export function edgeText(message: MessageTexts, end: boolean): string | undefined {
  const piece = end ? endPiece(message as CompactMessage) : startPiece(message as CompactMessage);
  return piece && pieceText(message as CompactMessage, piece);
}

function pieceText(message: CompactMessage, piece: Piece): string {
  return piece.kind === 'text' ? message.text : message.toolResults[piece.result]!.output;
}

function withPiece(message: CompactMessage, piece: Piece, change: (text: string) => string): CompactMessage {
  if (piece.kind === 'text') return { ...message, text: change(message.text) };
  const toolResults = message.toolResults.map((result, index) =>
    index === piece.result ? { ...result, output: change(result.output) } : result,
  );
  return { ...message, toolResults };
}

/**
 * `redacted` (each of `originals` redacted alone, in order) with the matches that cross a seam
 * between two adjacent messages replaced on both sides, giving the event loop a turn every few
 * milliseconds.
 */
export async function redactMessageSeams(
  originals: readonly CompactMessage[],
  redacted: CompactMessage[],
  redact: Redactor,
  slice: TimeSlice = new TimeSlice(),
): Promise<void> {
  for (let i = 0; i + 1 < originals.length; i++) {
    const k = nextTextual(originals, i);
    [redacted[i], redacted[k]] = cutSeam(originals[i]!, originals[k]!, [redacted[i]!, redacted[k]!], redact);
    if (slice.due()) await slice.pause();
  }
}

/**
 * `redacted` (the redactions of `before` and `after`, two messages a reader joins) with a match
 * that crosses their seam replaced on both sides, in the parsed texts and the wire forms.
 */
export function cutSeam(
  before: CompactMessage,
  after: CompactMessage,
  redacted: readonly [CompactMessage, CompactMessage],
  redact: Redactor,
): [CompactMessage, CompactMessage] {
  let [first, second] = redacted;
  const end = endPiece(before);
  const start = end && startPiece(after);
  if (end && start) {
    const a = pieceText(before, end);
    const b = pieceText(after, start);
    const cut = seamCut(a, b, redact);
    if (cut) {
      first = withPiece(first, end, (text) => cutPiece(a, text, 0, cut[0], redact));
      second = withPiece(second, start, (text) => cutPiece(b, text, cut[1], 0, redact));
    }
  }
  // The wire forms meet at the same seam (a cached prefix sends them as they are).
  const raws = [first.raw, second.raw];
  redactBlockSeams([before.raw, after.raw], raws, redact);
  if (raws[0] !== first.raw) first = { ...first, raw: raws[0] };
  if (raws[1] !== second.raw) second = { ...second, raw: raws[1] };
  return [first, second];
}

/**
 * The messages of a slice of a conversation (`picked`, in order, each `messages[i]` built from
 * `picked[i]`) cut where a secret crosses a seam with a message outside the slice (a pinned
 * user turn before the folded ones, the first kept message after them): the slice is sent alone
 * and its half of the secret would leave whole. `message` builds a message of `all`.
 */
export function cutOuterSeams<T>(
  all: readonly T[],
  picked: readonly T[],
  messages: CompactMessage[],
  message: (entry: T) => CompactMessage,
  redact: Redactor,
): void {
  let j = 0;
  let previous = -1;
  for (let k = 0; k < all.length && j < picked.length; k++) {
    if (all[k] !== picked[j]) continue;
    if (k > 0 && previous !== k - 1) {
      const outside = neighbour(all, k, -1, message);
      const inside = textual(messages, j, 1);
      if (outside && inside !== undefined)
        messages[inside] = cutSeam(outside, messages[inside]!, [outside, messages[inside]!], redact)[1];
    }
    if (k + 1 < all.length && all[k + 1] !== picked[j + 1]) {
      const outside = neighbour(all, k, 1, message);
      const inside = textual(messages, j, -1);
      if (outside && inside !== undefined)
        messages[inside] = cutSeam(messages[inside]!, outside, [messages[inside]!, outside], redact)[0];
    }
    previous = k;
    j++;
  }
}

/** The index of the first message from `j` on (`step` 1) or back (-1) that is not calls-only. */
function textual(messages: readonly CompactMessage[], j: number, step: number): number | undefined {
  for (let at = j, n = 0; at >= 0 && at < messages.length && n <= MAX_SKIPPED; at += step, n++) {
    if (!callsOnly(messages[at]!)) return at;
  }
  return undefined;
}

/** The message before (`step` -1) or after (1) position `k` of `all`, past calls-only ones. */
function neighbour<T>(
  all: readonly T[],
  k: number,
  step: number,
  message: (entry: T) => CompactMessage,
): CompactMessage | undefined {
  for (let at = k + step, n = 0; at >= 0 && at < all.length && n <= MAX_SKIPPED; at += step, n++) {
    const found = message(all[at]!);
    if (!callsOnly(found)) return found;
  }
  return undefined;
}

/** `redactBlockSeams` over a long array of wire messages, in slices. */
export async function redactWireSeams(
  source: readonly unknown[],
  out: unknown[],
  redact: Redactor,
  slice: TimeSlice = new TimeSlice(),
): Promise<void> {
  for (let i = 0; i + 1 < source.length; i++) {
    const pair = [out[i], out[i + 1]];
    redactBlockSeams([source[i], source[i + 1]], pair, redact);
    out[i] = pair[0];
    out[i + 1] = pair[1];
    if (slice.due()) await slice.pause();
  }
}
