import { onProcessCachesRelease, releaseRegExpCode } from '../process-caches.js';
import { looksLikeCode } from './looks-like-code.js';
import {
  asciiWord,
  gluedValueAt,
  looksLikeMoreCode,
  looksLikePlaceholder,
  looksLikeProse,
  wordyName,
} from './redaction-placeholders.js';

/**
 * What a value after a secret-named key must look like to be taken for a secret: not prose,
 * a placeholder, a type name, a path, a count, nor code that handles a secret by name
 * (`const token = getToken()`, `password = req.body.password;`, `token: ${{ secrets.X }}`).
 */

/** Words that start prose, a placeholder or a type, not a secret (`password: is required`). */
export const NOT_A_VALUE = new Set(
  'is are was were be the a an and or not no none null nil true false yes undefined required optional set unset empty see use it this that must should will can to of in for with from by on if when your my our string str number int integer bool boolean bytes any unknown object void never function async await return new typeof const let var'.split(
    ' ',
  ),
);

/** A mix of upper case, lower case and digits over 16 characters: key material, not a file name. */
export const KEY_MATERIAL = (segment: string) =>
  segment.length >= 16 && /[A-Z]/.test(segment) && /[a-z]/.test(segment) && /[0-9]/.test(segment);

/** `/srv/app`, `~/x`, `./a/b`, `src/auth/x`: a path, not a secret (base64 key material is not). */
export function looksLikePath(word: string): boolean {
  if (!word.includes('/') || word.length > 1024) return false;
  if (!/^(?:~|\.{1,2})?\/?[A-Za-z0-9_.@~-]+(?:\/[A-Za-z0-9_.@~-]*)*$/.test(word)) return false;
  const segments = word.split('/');
  if (segments.some(KEY_MATERIAL)) return false;
  // One segment of 8 or more characters without a dot that is not a lower-case word
  // (`/AAAA...` of a 40-character AWS secret, whole or cut) is no path; `/workspace` is.
  const named = segments.filter(Boolean);
  const only = named.length === 1 ? named[0]! : '';
  if (only.length >= 8 && !only.includes('.') && !/^[a-z_-]+$/.test(only)) return false;
  return /^[~./]/.test(word) || !/[A-Z]/.test(word);
}

/** A CSS pseudo-class or pseudo-element right after `:` (`.token:hover`, `.secret::before`). */
const CSS_PSEUDO =
  /^:?(?:hover|focus|focus-visible|focus-within|active|visited|link|before|after|first-child|last-child|only-child|nth-child|nth-of-type|first-of-type|last-of-type|not|is|where|has|disabled|enabled|checked|root|placeholder|empty|invalid|valid|required|target|selection|marker)(?![\w-])/;

/** The index after `\\*["']?` at `at` (the opening of a quoted value, escaped at any depth). */
function afterOpening(text: string, at: number): number {
  let index = at;
  while (text.charCodeAt(index) === 92) index++;
  const code = text.charCodeAt(index);
  return code === 34 || code === 39 ? index + 1 : at;
}

/** The value starts with a quote, escaped at any depth (`"`, `\\"`): a literal. */
function startsQuoted(text: string, at: number): boolean {
  let index = at;
  while (text.charCodeAt(index) === 92) index++;
  const code = text.charCodeAt(index);
  return code === 34 || code === 39;
}

const SCHEME_WORD = /(?:bearer|basic|token|digest)[ \t]+/iy;

/** The value of a `key = value` match without its quotes and scheme word. */
export function bareValue(match: string, groups: readonly (string | undefined)[]): string {
  let from = (groups[0]?.length ?? 0) + (groups[1]?.length ?? 0);
  // `Bearer x`: a scheme word first (only a letter can start one).
  const lead = match.charCodeAt(from) | 32;
  if (lead === 98 || lead === 116 || lead === 100) {
    SCHEME_WORD.lastIndex = from;
    if (SCHEME_WORD.test(match)) from = SCHEME_WORD.lastIndex;
  }
  from = afterOpening(match, from);
  // `\\*["']?\s*$`: trailing blanks, then the closing quote and its backslashes.
  let to = match.length;
  while (to > from && isBlank(match.charCodeAt(to - 1))) to--;
  if (to > from && (match.charCodeAt(to - 1) === 34 || match.charCodeAt(to - 1) === 39)) to--;
  while (to > from && match.charCodeAt(to - 1) === 92) to--;
  return from === 0 && to === match.length ? match : match.slice(from, to);
}

/** `\s`: blanks, line breaks and Unicode spaces. */
const isBlank = (code: number) =>
  code === 32 || (code >= 9 && code <= 13) || (code > 127 && /\s/.test(String.fromCharCode(code)));

/** The index of the first blank in `value`, or its length. */
function blankAt(value: string): number {
  for (let index = 0; index < value.length; index++) if (isBlank(value.charCodeAt(index))) return index;
  return value.length;
}

/** The value's first word: up to a blank or `,;)]}`. */
function firstWord(value: string): string {
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code === 44 || code === 59 || code === 41 || code === 93 || code === 125 || isBlank(code))
      return value.slice(0, index);
  }
  return value;
}

/** A number or a version (`128000`, `1.5`, `^1.0.21`, `v2.3.0-rc.1`). */
const isNumberOrVersion = (first: string) =>
  /^\d+(?:\.\d+)?$/.test(first) || /^[\^~>=<v]{0,3}\d+(?:\.\d+){1,3}(?:-[\w.]+)?$/.test(first);

/** What code after `key =` can start with (a name, `$`, `%`, a bracket, a backtick, `/*`). */
const isCodeStart = (code: number) =>
  (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || CODE_PUNCTUATION.has(code);
const CODE_PUNCTUATION = new Set([...'_$%{([`/'].map((char) => char.charCodeAt(0)));
const NUMBER_LEAD = new Set([...'^~>=<v'].map((char) => char.charCodeAt(0)));

/** `pwd` or `auth` in any case: keys whose value is as often a path as a secret. */
function isPathKey(key: string): boolean {
  const word = key.length === 3 ? 'pwd' : key.length === 4 ? 'auth' : '';
  for (let index = 0; index < word.length; index++) {
    if ((key.charCodeAt(index) | 32) !== word.charCodeAt(index)) return false;
  }
  return word !== '';
}

/**
 * `token: 128000`, `pwd: /path`, `auth: src/auth/x`, `password: is required`,
 * `token: string`, `const token = getToken();` are left alone. The cheap checks on the value
 * come first; the value's line is read only for an unquoted value (code, a namespace, CSS).
 */
export function acceptKeyValue(
  match: string,
  groups: readonly (string | undefined)[],
  text = match,
  start = 0,
): boolean {
  const key = groups[0] ?? '';
  const separator = groups[1] ?? '';
  const verdict = rememberedValueVerdict(match, key, separator);
  if (verdict !== undefined) return verdict;
  if (separator !== ':' && plainWordAt(text, start + key.length + separator.length)) return true;
  // The value's line, beyond the match (a call's closing bracket may come after the value).
  const rest = lineFrom(text, start + key.length + separator.length, 512);
  // `password=hAhx)AAAAAAAAAAAA`: no expression ends at a bracket glued to more of the value.
  const head = firstWord(rest).length;
  if (gluedValueAt(rest, head, head === 0)) return true;
  if (!isCodeStart(rest.charCodeAt(0))) return !(separator === ':' && CSS_PSEUDO.test(rest));
  // `auth:login`: a namespace, a lower-case word glued to its colon.
  if (
    separator === ':' &&
    /^[a-z]{1,16}(?![\w-])/.test(rest) &&
    !/\d/.test(firstWord(bareValue(match, groups)))
  )
    return false;
  // `password=swordfish, then run the tests`: a name, then prose, is a value, not code.
  if ((separator === '=' || separator === ':') && WORD_THEN_PROSE.test(rest)) return true;
  if (looksLikeMoreCode(rest, key)) return false;
  // `.btn-secret:hover {` is a CSS selector, not an assignment.
  if (separator === ':' && CSS_PSEUDO.test(rest)) return false;
  // An unquoted value may be code that handles the secret by name.
  return !looksLikeCode(rest, key);
}

/** A word glued to `,` or `;`, then two words of prose (not `, user=name)` of a call). */
const WORD_THEN_PROSE = /^[A-Za-z]{1,64}[,;] [A-Za-z]{1,24} [A-Za-z]{1,24}(?:[ .,;!?]|$)/;

/**
 * The last four verdicts of {@link valueVerdict} by match, key and separator (compared as
 * strings): text dense with the same assignment (`auth="auth="...`, `password=b ...`) reads
 * each value once. The verdict depends on nothing else.
 */
const VERDICTS = {
  matches: ['', '', '', ''],
  keys: ['', '', '', ''],
  separators: ['', '', '', ''],
  verdicts: [undefined, undefined, undefined, undefined] as (boolean | undefined)[],
  next: 0,
};

// The matches are slices of the texts redacted (a secret and the text around it, kept alive
// whole by the slice): dropped when the last manager shuts down (process-caches.ts).
onProcessCachesRelease(() => {
  VERDICTS.matches.fill('');
  VERDICTS.keys.fill('');
  VERDICTS.separators.fill('');
  VERDICTS.verdicts.fill(undefined);
  VERDICTS.next = 0;
});

function rememberedValueVerdict(match: string, key: string, separator: string): boolean | undefined {
  const known = VERDICTS;
  for (let index = 0; index < 4; index++) {
    if (known.matches[index] === match && known.keys[index] === key && known.separators[index] === separator)
      return known.verdicts[index];
  }
  const verdict = valueVerdict(match, key, separator);
  const slot = known.next;
  known.matches[slot] = match;
  known.keys[slot] = key;
  known.separators[slot] = separator;
  known.verdicts[slot] = verdict;
  known.next = (slot + 1) & 3;
  return verdict;
}

/**
 * What the match alone says of its value: false for no value (a word of prose or a type, a
 * count, a path, a placeholder), true for a quoted literal, undefined when the value's line
 * must be read (an unquoted value may be code).
 */
function valueVerdict(match: string, key: string, separator: string): boolean | undefined {
  const value = bareValue(match, [key, separator]);
  let first = firstWord(value);
  // `password=)Ab3x9Kq2Lm`, `password=A)AAAAAAAAAAAA`: a closing bracket or a comma glued to six
  // characters or more goes on with the value (`login(password=)`, `f(password=)[0]`,
  // `password: a, b` end theirs there).
  if (gluedValueAt(value, first.length, first === '')) first = value.slice(0, blankAt(value));
  if (
    first === '' ||
    (first.length <= 9 && asciiWord(first, false) && NOT_A_VALUE.has(first.toLowerCase())) ||
    first.startsWith('<REDACTED>')
  )
    return false;
  const digit = first.charCodeAt(0);
  // Plain numbers are counts and limits (`token: 128000`), versions are versions
  // (`"js-tiktoken": "^1.0.21"`), except for passwords and PINs.
  // (A number or version starts with a digit or one of `^~>=<v`.)
  const numeric = (digit >= 48 && digit <= 57) || NUMBER_LEAD.has(digit);
  if (numeric && isNumberOrVersion(first) && !/pass|pwd|secret|pin/i.test(key)) return false;
  // A path is a value only for the keys that name one as often as a secret (`pwd`, `auth`):
  // after `aws_secret_access_key=` a slash-separated value is key material (`/AAAA/AAAA...`).
  if (isPathKey(key) && looksLikePath(first)) return false;
  // A key glued to `=` or `:` with its value glued to it (`password=swordfish and then run the
  // tests`) is an assignment whatever follows: its first word is the value, judged alone (the
  // prose after it may name a secret: `... then rotate the key`). Only a spaced separator
  // opens prose (`password: must be set ...`) or a placeholder of words (`token: your token`).
  if ((separator === '=' || separator === ':') && !startsQuoted(match, key.length + separator.length)) {
    if (looksLikePlaceholder(first, key)) return false;
  } else if (looksLikePlaceholder(value, key) || looksLikeProse(value)) return false;
  // A quoted value is a literal: no code, namespace nor CSS selector starts with a quote.
  return startsQuoted(match, key.length + separator.length) ? true : undefined;
}

/** `WORDY` of `looks-like-code.ts` for a name run in place: the run must end where the pattern does. */
const WORDY_RUN = /(?:[A-Z]{2,8}(?![a-z])|[A-Z]?[a-z]{2,}|[0-9]{1,2}|[_$])+(?![\w$])/y;

/**
 * An unquoted value that neither `looksLikeMoreCode` nor {@link looksLikeCode} reads as code,
 * told by a few character reads at `from` without cutting out its line (`password=b secret=c`
 * dense in hostile text): one name part (no `.`, `?`, `:`, `-` after it), not led by `a`, `f`,
 * `n` or `y` (`async`, `function`, `new`, `yield`) nor made of words, then at most four blanks
 * and a printable character that goes on no code shape (`&|?=!([;,)]}`, a backslash). False
 * leaves the question to the line.
 */
export function plainWordAt(text: string, from: number): boolean {
  const head = text.charCodeAt(from);
  if (
    !((head | 32) >= 97 && (head | 32) <= 122) ||
    head === 97 ||
    head === 102 ||
    head === 110 ||
    head === 121
  )
    return false;
  let end = from + 1;
  while (end - from < 63 && isRunCode(text.charCodeAt(end))) end++;
  const after = text.charCodeAt(end);
  if (isRunCode(after) || after === 46 || after === 63 || after === 58 || after === 45) return false;
  let skip = end;
  while (skip - end < 4 && (text.charCodeAt(skip) === 32 || text.charCodeAt(skip) === 9)) skip++;
  const next = text.charCodeAt(skip);
  if (!(next >= 33 && next <= 126) || next === 92 || AFTER_CODE_CHARS.includes(text[skip]!)) return false;
  WORDY_RUN.lastIndex = from;
  return !WORDY_RUN.test(text);
}

/** `[\w$]`. */
const isRunCode = (code: number) => {
  const letter = code | 32;
  return (letter >= 97 && letter <= 122) || (code >= 48 && code <= 57) || code === 95 || code === 36;
};
/** What follows a name in the code shapes of `looksLikeMoreCode`. */
const AFTER_CODE_CHARS = '&|?=!([;,)]}';

/**
 * A compact value after a key that merely contains a secret word (`SECRET_KEY_BASE`,
 * `OPENAI_KEY`, `private_key_id`): key material, not an identifier (`user_123_profile`), a
 * path, a count or code.
 */
export function looksLikeKeyMaterial(value: string): boolean {
  if (looksLikePath(value) || looksLikeCode(value, '')) return false;
  // Names made of words (`hasLegacyRepeatableKeyShape`, `parentKeyOpts.parentKey`).
  if (value.split('.').every(wordyName)) return false;
  // 24 characters or more in one run, no separator (`OPENAI_KEY=<32 lower-case letters>`).
  if (/^[A-Za-z0-9]{24,}$/.test(value) && !wordyName(value)) return true;
  const letters = /[A-Za-z]/.test(value);
  const digits = /[0-9]/.test(value);
  const mixedCase = /[A-Z]/.test(value) && /[a-z]/.test(value);
  if (!letters || !(digits || (mixedCase && value.length >= 20))) return false;
  // snake/kebab identifiers and versions: every part a word or a number (`prod-db-v2`).
  const parts = value.split(/[_.-]/);
  if (parts.length >= 2 && parts.every((part) => /^(?:[a-z]*|[A-Z]*|[A-Z][a-z]+)[0-9]{0,4}$/.test(part))) {
    return false;
  }
  return true;
}

/** The text from `from` to its line's end (a raw or JSON-escaped break), at most `max` characters. */
export function lineFrom(text: string, from: number, max: number): string {
  const window = text.slice(from, from + max);
  const raw = window.indexOf('\n');
  const escaped = window.indexOf('\\n');
  let end = window.length;
  if (raw >= 0) end = raw > 0 && window[raw - 1] === '\r' ? raw - 1 : raw;
  if (escaped >= 0 && escaped < end) end = escaped;
  return window.slice(0, end);
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(CSS_PSEUDO, SCHEME_WORD, WORD_THEN_PROSE, WORDY_RUN);
