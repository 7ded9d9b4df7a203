/**
 * Lines of data rather than prose (key armor, a key's body line, a pasted token, a hash list, a
 * CSV row), told apart by a scan of char codes over the line's whitespace-separated tokens: no
 * split, no token sliced, no regex run a token (the instruction model asks it of every sentence).
 */

import { releaseRegExpCode } from '../process-caches.js';
import { headOf } from './instruction-features.js';

/** Whether `code` is what `\s` matches and `trim()` drops: white space or a line terminator. */
export function isSpace(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** How many whitespace-separated tokens `text` holds, counted up to `most`. */
export function tokenCount(text: string, most: number): number {
  let count = 0;
  let inToken = false;
  for (let i = 0; i < text.length && count <= most; i++) {
    const space = isSpace(text.charCodeAt(i));
    if (!space && !inToken) count++;
    inToken = !space;
  }
  return Math.min(count, most);
}

const isLetter = (code: number) => (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
/** Marks before a word: `( " ' “ ‘ * _ [`. */
const isOpening = (code: number) =>
  code === 40 ||
  code === 34 ||
  code === 39 ||
  code === 0x201c ||
  code === 0x2018 ||
  code === 42 ||
  code === 95 ||
  code === 91;
/** Marks after a word: `) " ' ” ’ . , ! ? ; : * _ ]`. */
const isClosing = (code: number) =>
  code === 41 ||
  code === 34 ||
  code === 39 ||
  code === 0x201d ||
  code === 0x2019 ||
  code === 46 ||
  code === 44 ||
  code === 33 ||
  code === 63 ||
  code === 59 ||
  code === 58 ||
  code === 42 ||
  code === 95 ||
  code === 93;
/** Joins inside a word: `' ’ -`. */
const isJoin = (code: number) => code === 39 || code === 0x2019 || code === 45;

/**
 * Whether `text` from `start` to `end` is a word: letters (two or more, an apostrophe or hyphen
 * inside), punctuation around, as `^[("'“‘*_[]*[A-Za-z]{2,}(?:['’-][A-Za-z]+)*[)"'”’.,!?;:*_\]]*$`
 * (each part read greedily: no part can take what the next one needs).
 */
function isWordAt(text: string, start: number, end: number): boolean {
  let i = start;
  while (i < end && isOpening(text.charCodeAt(i))) i++;
  const letters = i;
  while (i < end && isLetter(text.charCodeAt(i))) i++;
  if (i - letters < 2) return false;
  while (i + 1 < end && isJoin(text.charCodeAt(i)) && isLetter(text.charCodeAt(i + 1))) {
    i += 2;
    while (i < end && isLetter(text.charCodeAt(i))) i++;
  }
  while (i < end && isClosing(text.charCodeAt(i))) i++;
  return i === end;
}

/** Key armor, as in `-----BEGIN RSA PRIVATE KEY-----` or `---- END SSH2 PUBLIC KEY ----`. */
const ARMOR = /-{4,}\s?(?:BEGIN|END)\b/;
/** Most tokens of a line read. */
const MOST_TOKENS = 64;

/**
 * True when `sentence` is data rather than prose: key armor, or a line of no word or where words
 * are under a fifth of the tokens (a key's body line, a pasted token, a hash list, a CSV row).
 * Such a line quoted alone would also be cut from the context that lets the redactor see it.
 */
export function isDataLine(sentence: string): boolean {
  const head = headOf(sentence);
  if (head.includes('----') && ARMOR.test(head)) return true;
  let tokens = 0;
  let words = 0;
  let i = 0;
  while (tokens < MOST_TOKENS) {
    while (i < head.length && isSpace(head.charCodeAt(i))) i++;
    if (i >= head.length) break;
    const start = i;
    while (i < head.length && !isSpace(head.charCodeAt(i))) i++;
    tokens++;
    if (isWordAt(head, start, i)) words++;
  }
  if (tokens === 0) return true;
  return words === 0 || words * 5 < tokens;
}

// Its machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(ARMOR);
