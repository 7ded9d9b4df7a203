import { gluedValueAt } from './redaction-placeholders.js';
import { NOT_A_VALUE } from './redaction-values.js';

/**
 * The `key = value` rule's gate (issue 44 point 5): `token=a` refused by a few character
 * reads, before the rule's regex, its match and its value checks.
 */

/** {@link NOT_A_VALUE} by first letter (`a` to `z`), for a look-up that allocates nothing. */
const NOT_A_VALUE_BY_LEAD: string[][] = Array.from({ length: 26 }, () => []);
for (const word of NOT_A_VALUE) NOT_A_VALUE_BY_LEAD[word.charCodeAt(0) - 97]!.push(word);

/** `text.slice(from, to)` is a word of {@link NOT_A_VALUE} in any case (ASCII letters only). */
function notAValueAt(text: string, from: number, to: number): boolean {
  const words = NOT_A_VALUE_BY_LEAD[(text.charCodeAt(from) | 32) - 97];
  if (words === undefined) return false;
  next: for (const word of words) {
    if (word.length !== to - from) continue;
    for (let index = 1; index < word.length; index++)
      if ((text.charCodeAt(from + index) | 32) !== word.charCodeAt(index)) continue next;
    return true;
  }
  return false;
}

/** `text.charCodeAt(index)`, or -1 past the end (a read out of bounds deoptimizes the gate). */
const codeAt = (text: string, index: number) => (index < text.length ? text.charCodeAt(index) : -1);

/** `[A-Za-z]`. */
const isLetter = (code: number) => (code | 32) >= 97 && (code | 32) <= 122;

/**
 * The `key = value` rule's prefilter, read before its regex: false where any match at `at`
 * would be refused by `acceptKeyValue` for its first word (`token=a`, `auth:none`,
 * `password=null;`). The key word ends where the run of `[A-Za-z_-]` from `at` does (the
 * separator starts with none of them); right after it an `=` or `:` (not `:=`, `=>`, `==`,
 * no blank nor quote: those are left to the regex), then one to nine letters ended by a blank,
 * `,;)]}` (not glued to more of a value, `gluedValueAt`) or the text's end: the value's first
 * word as `acceptKeyValue` reads it (no scheme
 * word is one of {@link NOT_A_VALUE}). Allocates nothing: dense hostile text
 * (`token=a token=a ...`) asks at every key.
 */
export function keyValueMayHold(text: string, at: number): boolean {
  let end = at;
  while (end - at < 64) {
    const code = codeAt(text, end);
    if (!isLetter(code) && code !== 95 && code !== 45) break;
    end++;
  }
  const separator = codeAt(text, end);
  if (separator !== 61 && separator !== 58) return true;
  const from = end + 1;
  let to = from;
  while (to - from < 10 && isLetter(codeAt(text, to))) to++;
  if (to === from || to - from > 9) return true;
  if (to < text.length && !endsFirstWord(text.charCodeAt(to))) return true;
  // `password=A)AAAAAAAAAAAA`: the value goes on past the bracket (see `acceptKeyValue`).
  if (gluedValueAt(text, to)) return true;
  return !notAValueAt(text, from, to);
}

/** A blank, a line break or `,;)]}`: these end a value's first word (ASCII only: a cheap subset). */
const endsFirstWord = (code: number) =>
  code === 32 ||
  code === 9 ||
  code === 10 ||
  code === 13 ||
  code === 44 ||
  code === 59 ||
  code === 41 ||
  code === 93 ||
  code === 125;
