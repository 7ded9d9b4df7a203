/**
 * Whether a sentence stands inside the material a message quotes (issue 45, twelfth pass): a
 * prompt that asks "Evaluate the following review:" and then quotes the review, or opens a
 * quotation mark on the first sentence of a news item and closes it three sentences later, holds
 * statements that are the material to work on, not asks. Read from the message's sentences
 * alone (their quotation marks, fences and closing colons), in one pass from the message's start.
 */

/**
 * What stands before a sentence in its message: `none`, `colon` (an earlier sentence ends with a
 * colon: "Here is the text:", "Reviews:"), `quote` (the sentence opens or stands inside a quotation
 * or a fenced block that an earlier sentence, or it, opened and did not close before it).
 */
export type MaterialCue = 'none' | 'colon' | 'quote';

/** Characters read from each sentence (a pasted blob beyond them decides nothing). */
const MAX_CHARS = 600;

const QUOTE = 34;
const OPEN_CURLY = 0x201c;
const CLOSE_CURLY = 0x201d;
const BACKTICK = 96;
/** Characters a straight quotation mark may follow to open a quotation (not an inch mark: `27"`). */
const BEFORE_OPEN = new Set([32, 9, 40, 91, 123, 58, 0x2014, 45]);
/** What may follow a closing mark for the sentence to be quoted whole: closing punctuation. */
const AFTER_CLOSE = /^[.!?,;:]?\s*$/;

/** The quotation being read: its kind (a straight mark, a curly one, a fence) and where it opened. */
interface Open {
  kind: 'straight' | 'curly' | 'fence';
  sentence: number;
  /** It opened at the head of its sentence: that sentence is quoted too. */
  atHead: boolean;
}

/**
 * The cue of each of `sentences` (one message's, in order): does it stand in quoted material. A
 * quotation counts once it closes (a stray mark never closed marks nothing); a sentence is
 * `quote` when it lies inside one, opens one at its head, or is quoted whole.
 */
export function materialCuesOf(sentences: readonly string[]): MaterialCue[] {
  const out = new Array<MaterialCue>(sentences.length);
  let open: Open | undefined;
  let colon = false;
  for (let k = 0; k < sentences.length; k++) {
    const sentence = sentences[k] as string;
    out[k] = colon ? 'colon' : 'none';
    const end = Math.min(sentence.length, MAX_CHARS);
    for (let i = 0; i < end; i++) {
      const c = sentence.charCodeAt(i);
      let kind: Open['kind'] | undefined;
      if (c === QUOTE) kind = 'straight';
      else if (c === OPEN_CURLY || c === CLOSE_CURLY) kind = 'curly';
      else if (
        c === BACKTICK &&
        sentence.charCodeAt(i + 1) === BACKTICK &&
        sentence.charCodeAt(i + 2) === BACKTICK
      )
        kind = 'fence';
      if (kind === undefined) continue;
      const width = kind === 'fence' ? 3 : 1;
      if (open === undefined) {
        const next = sentence.charCodeAt(i + width);
        const opens =
          kind === 'fence' ||
          c === OPEN_CURLY ||
          (c === QUOTE &&
            (i === 0 || BEFORE_OPEN.has(sentence.charCodeAt(i - 1))) &&
            i + width < sentence.length &&
            next !== 32);
        if (opens) open = { kind, sentence: k, atHead: i === 0 };
      } else if (open.kind === kind && c !== OPEN_CURLY) {
        closeQuotation(out, open, k, AFTER_CLOSE.test(sentence.slice(i + width, end)));
        open = undefined;
      }
      i += width - 1;
    }
    if (sentence.slice(0, end).trimEnd().endsWith(':')) colon = true;
  }
  return out;
}

/**
 * Marks the sentences of a quotation that opened at `open` and closed in sentence `k`: those
 * between, the one it opened at the head of, and the closing one when nothing but punctuation
 * follows the mark (`... the end." and tell me why` keeps its ask).
 */
function closeQuotation(out: MaterialCue[], open: Open, k: number, atEnd: boolean): void {
  if (open.atHead && (open.sentence < k || atEnd)) out[open.sentence] = 'quote';
  for (let j = open.sentence + 1; j < k; j++) out[j] = 'quote';
  if (open.sentence < k && atEnd) out[k] = 'quote';
}
