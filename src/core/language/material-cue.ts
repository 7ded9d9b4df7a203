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

/** How a sentence changes the quotation state: the count of straight double quotes, and curly opens minus closes. */
function quoteMarks(sentence: string): { straight: number; curly: number; fences: number } {
  let straight = 0;
  let curly = 0;
  let fences = 0;
  const end = Math.min(sentence.length, MAX_CHARS);
  for (let i = 0; i < end; i++) {
    const c = sentence.charCodeAt(i);
    if (c === 34) straight++;
    else if (c === 0x201c) curly++;
    else if (c === 0x201d) curly--;
    else if (c === 96 && sentence.charCodeAt(i + 1) === 96 && sentence.charCodeAt(i + 2) === 96) {
      fences++;
      i += 2;
    }
  }
  return { straight, curly, fences };
}

/** Closing punctuation that may follow a closing quotation mark. */
const AFTER_CLOSE = /["”][.!?,;:]?$/;

/**
 * A sentence that opens on a quotation mark or a fence: a quoted passage starts here (the mark left
 * open), or the whole sentence is quoted (closed at its end: `"I am angry that ..."` given to rewrite).
 */
function opensQuote(sentence: string, straight: number, curly: number): boolean {
  if (sentence.startsWith('```')) return true;
  const first = sentence.charCodeAt(0);
  if (first !== 34 && first !== 0x201c) return false;
  if ((first === 34 && straight % 2 === 1) || (first === 0x201c && curly > 0)) return true;
  const tail = sentence.length > MAX_CHARS ? '' : sentence.trimEnd();
  return straight + Math.abs(curly) <= 2 && AFTER_CLOSE.test(tail);
}

/** The cue of each of `sentences` (one message's, in order): does it stand in quoted material. */
export function materialCuesOf(sentences: readonly string[]): MaterialCue[] {
  const out = new Array<MaterialCue>(sentences.length);
  let straightOpen = false;
  let curlyDepth = 0;
  let fenceOpen = false;
  let colon = false;
  for (let k = 0; k < sentences.length; k++) {
    const sentence = sentences[k] as string;
    const marks = quoteMarks(sentence);
    const inside = straightOpen || curlyDepth > 0 || fenceOpen;
    out[k] = inside || opensQuote(sentence, marks.straight, marks.curly) ? 'quote' : colon ? 'colon' : 'none';
    if (marks.straight % 2 === 1) straightOpen = !straightOpen;
    curlyDepth = Math.max(0, curlyDepth + marks.curly);
    if (marks.fences % 2 === 1) fenceOpen = !fenceOpen;
    const trimmed = sentence.length > MAX_CHARS ? sentence.slice(0, MAX_CHARS) : sentence;
    if (trimmed.trimEnd().endsWith(':')) colon = true;
  }
  return out;
}
