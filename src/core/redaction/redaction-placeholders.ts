/**
 * Values after a secret-named key that real code and docs write and that hold no secret:
 * placeholders (`<your-api-key>`, `sk-lf-...`, `"my-top-secret"`, `dbpassword`), prose
 * (`pass: valid JS source is always analyzed correctly`), namespaces (`auth:login`), CORS
 * modes (`credentials: 'include'`) and code the value rules of `looks-like-code.ts` do not
 * read as code (multi-line literals and calls, arrow functions, comparisons, indexes, chained
 * assignments, camelCase names). Measured on the npm code and READMEs vendored in
 * test/fixtures/redaction/real-text (issue 44: at most one false alarm per MB).
 */

import { UNLISTED_RANK, wordRank } from '../language/word-rarity.js';
import { releaseRegExpCode } from '../process-caches.js';

const SECRET_WORDS = /^(?:my|your)?(?:token|password|passwd|secret|key|api[_-]?key|credentials?)s?$/i;
const PLACEHOLDER_LEAD =
  /^(?:your|my|some|fallback|example|dummy|sample|fake|changeme|replace|use|xxx+)[-_]/i;
const STOP_WORDS = new Set(
  'a an the to of and or but is are was be has have not for with from by in on as it this that always all any'.split(
    ' ',
  ),
);
const CORS_MODES = /^(?:include|omit|same-origin)$/;

/**
 * Every character of `text` is an ASCII letter, or `_`/`-` when `marks`: the regexes of word
 * lists (`SECRET_WORDS`, `NOT_A_VALUE`) cannot match otherwise (a cheap check first: dense
 * hostile text asks at every key).
 */
export function asciiWord(text: string, marks: boolean): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index) | 32;
    if (code >= 97 && code <= 122) continue;
    if (marks && (code === 127 || code === 45)) continue; // `_` (95 | 32) and `-`
    return false;
  }
  return true;
}

/** `/[-_ ]/.test(text)`, without a regex. */
function hasWordBreak(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 45 || code === 95 || code === 32) return true;
  }
  return false;
}

/** `/^[a-z]+$/.test(text)`, without a regex. */
function lowerLetters(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 97 || code > 122) return false;
  }
  return text.length > 0;
}

/**
 * A word of a placeholder after its lead (`your-api-key`, `MY_DB_PASSWORD`, `fake-token-123`):
 * one case of letters with a vowel and no run of four, or a short number. `my_S3cr3tP4ss` and
 * `MY_AAAAAAAAAAAAA` hold no such words: a password may start with `my_`.
 */
const placeholderWord = (word: string) =>
  word === '' ||
  /^\d{1,6}$/.test(word) ||
  (/^(?:[a-z]{1,24}|[A-Z]{1,24})\d{0,4}$/.test(word) && /[aeiouy]/i.test(word) && !/(.)\1{3}/.test(word));

/** `<...>`, `...`, `your-...`, words that name a secret (`password-for-30001`, `TOKEN`, `myToken`). */
export function looksLikePlaceholder(value: string, key: string): boolean {
  // `<your-api-key>`, an ABNF rule `1*<any CHAR except CTLs>`, `sk-lf-...` (three dots: `…`
  // is how the library's own clips end, after a secret's real head).
  if (value.length <= 15 && value.endsWith('...') && /^[\w-]{0,12}\.\.\.$/.test(value)) return true;
  const head = value.charCodeAt(0);
  if ((head === 60 || head === 42 || (head >= 48 && head <= 57)) && /^\d{0,2}\*?<[^<>]{1,80}>/.test(value))
    return true;
  let lead = value;
  if (hasWordBreak(value)) {
    const words = value.split(/[-_ ]+/);
    if (PLACEHOLDER_LEAD.test(value) && words.slice(1).every(placeholderWord)) return true;
    if (words.length >= 2 && words.every((word) => /^[a-z]*[0-9]*$/i.test(word))) {
      if (words.some((word) => SECRET_WORDS.test(word))) return true;
    }
    lead = words[0] ?? '';
  }
  // `key` to `yourcredentials`: 3 to 16 characters.
  if (lead.length >= 3 && lead.length <= 16 && asciiWord(lead, true) && SECRET_WORDS.test(lead)) return true;
  // `password = dbpassword`: lower-case letters that end with the key's own word.
  if (value.length >= 3 && value.length <= 16 && lowerLetters(value)) {
    const word = /pass(?:word|wd)?|secret|token/i.exec(key)?.[0]?.toLowerCase();
    if (word && value.endsWith(word)) return true;
  }
  return key.length >= 11 && /credentials$/i.test(key) && CORS_MODES.test(value);
}

/**
 * A line of prose: five words or more, two of them function words, the first a word too
 * (`Expired tokens are ...`). A first word with digits, inner capitals or a long run of
 * capitals is the value before the prose (`password=Hunter22 and then run the tests`,
 * `password=AAAAAAAAAAAA run the A run`); a lower-case word there stays ambiguous.
 */
export function looksLikeProse(text: string): boolean {
  // Five words need nine characters at least (`a b c d e`).
  if (text.length < 9) return false;
  const words = text.trim().split(/\s+/);
  if (words.length < 5 || !PROSE_WORD.test(words[0]!)) return false;
  return words.filter((word) => STOP_WORDS.has(word.toLowerCase())).length >= 2;
}

/** A word of prose: lower-case or capitalized (`don't`, `built-in`), or an acronym (`NOTE:`). */
const PROSE_WORD = /^["'(]?(?:[A-Z]?[a-z]+(?:['’-][a-z]+)*|[A-Z]{1,5})[.,:;!?"')]?$/;

/** A name made of words, camelCase or snake_case (`kEnumerableProperty`, `p_token`). */
const WORDS = /^[a-z]?(?:[A-Z]{2,8}(?![a-z])|[A-Z]?[a-z]{2,}|[0-9]{1,2}|[_$])+$/;
/**
 * A strict camelCase name: lower-case head, then humps of a capital and two lower-case letters
 * or more (`hasLegacyRepeatableKeyShape`), made of English words: of its parts of three letters
 * or more, at least half are among the 8,000 most frequent (`language/word-rarity.ts`). Random
 * key material (`AqrAAAwyAAAA`) or a clipped secret that takes the shape (`gAujqAddAlnr`) is not
 * one.
 */
export function wordyName(name: string): boolean {
  if (!/^[a-z]{1,24}(?:[A-Z][a-z]{2,24}){1,8}$/.test(name)) return false;
  let parts = 0;
  let known = 0;
  for (const part of name.split(/(?=[A-Z])/)) {
    if (part.length < 3) continue;
    parts++;
    if (wordRank(part.toLowerCase()) < UNLISTED_RANK) known++;
  }
  return known > 0 && known * 2 >= parts;
}

/** `[A-Za-z_$]`, and `[\w$]` when `digits`. */
function isNameCode(code: number, digits: boolean): boolean {
  const letter = code | 32;
  return (
    (letter >= 97 && letter <= 122) || code === 95 || code === 36 || (digits && code >= 48 && code <= 57)
  );
}

/** The length of the path separator at `at`: `.` and `?.`, and `::` and `->` when `scoped`; or 0. */
function separatorLength(line: string, at: number, scoped: boolean): number {
  const code = line.charCodeAt(at);
  if (code === 46) return 1;
  if (code === 63) return line.charCodeAt(at + 1) === 46 ? 2 : 0;
  if (!scoped) return 0;
  if (code === 58) return line.charCodeAt(at + 1) === 58 ? 2 : 0;
  return code === 45 && line.charCodeAt(at + 1) === 62 ? 2 : 0;
}

/**
 * The end of `^[A-Za-z_$][\w$]{0,63}(?:\??\.[A-Za-z_$][\w$]{0,63}){0,8}` in `line` (with
 * `scoped`, `::` and `->` separate parts too), or -1: a name path (`a`, `a.b`, `a?.b`, `a::b`),
 * read without a regex (it is asked at every unquoted value).
 */
export function pathEnd(line: string, scoped = false): number {
  if (!isNameCode(line.charCodeAt(0), false)) return -1;
  let end = 1;
  while (end < 64 && isNameCode(line.charCodeAt(end), true)) end++;
  for (let part = 0; part < 8; part++) {
    const separator = separatorLength(line, end, scoped);
    if (separator === 0 || !isNameCode(line.charCodeAt(end + separator), false)) break;
    const start = end + separator;
    let at = start + 1;
    while (at - start < 64 && isNameCode(line.charCodeAt(at), true)) at++;
    end = at;
  }
  return end;
}

/** `\s`. */
const isSpace = (code: number) =>
  code === 32 || (code >= 9 && code <= 13) || (code > 127 && /\s/.test(String.fromCharCode(code)));
/** What follows a name in the code shapes of {@link looksLikeMoreCode}. */
const AFTER_CODE = new Set([...'&|?=!([;,)]}'].map((char) => char.charCodeAt(0)));

/**
 * Code after `key =` or `key:` (`rest`: the value to the end of its line) that the code rules
 * of `looks-like-code.ts` miss.
 */
export function looksLikeMoreCode(rest: string, key: string): boolean {
  const line = rest.trimEnd();
  const head = line.charCodeAt(0);
  if (head === 91 || head === 123 || head === 40 || head === 47) {
    // A literal or call that goes on over the next lines: `[`, `{`, `x.y([`.
    if (/^(?:[[{(]|\(\[|\(\{)$/.test(line)) return true;
    if (/^\([\w$, ]{0,128}\)\s{0,4}=>/.test(line)) return true;
    // An object literal (`{ token: "TOKEN" }`).
    if (/^\{\s/.test(line)) return true;
    // A comment first (`/** @type {const} */ ([...])`).
    if (line.startsWith('/*')) return true;
  }
  if ((head === 97 || head === 102) && /^(?:async\s+)?function\b/.test(line)) return true;
  const end = pathEnd(line);
  if (end < 0) return false;
  // Every code shape below goes on, past up to four blanks, with one of `&|?=!([;,)]}` or ends.
  let skip = end;
  while (skip - end < 4 && skip < line.length && isSpace(line.charCodeAt(skip))) skip++;
  if (skip < line.length && !AFTER_CODE.has(line.charCodeAt(skip))) return false;
  const path = line.slice(0, end);
  const after = line.slice(end);
  const parts = path.split(/\??\./);
  if (/^\s{0,4}(?:&&|\|\||\?\?|===?|!==?)\s/.test(after)) return true;
  // A chained assignment (`exports.TOKEN = exports.STRICT_TOKEN = [`), not `sid=abc` of a cookie.
  if (/^\s{1,4}=(?:\s|$)/.test(after)) return true;
  if (/^[([]{1,2}$/.test(after) && parts.every((part) => WORDS.test(part))) return true;
  // A call of a camelCase name with names for arguments: `lastTokenOf(messages);`.
  const camel = (part: string) => /^[a-z][a-z]{1,}(?:[A-Z][a-z]{0,}){1,6}$/.test(part);
  if (/^\((?:[\w$.]{1,64}(?:,\s?[\w$.]{1,64}){0,8})?\)[\s;,)]*$/.test(after) && parts.every(camel))
    return true;
  // An index with a simple expression: `tokens[i]`, `ARGV[2]`, `header[i - 1].trim()`.
  if (/^\[[\w$ +\-*/.]{1,32}\](?:\.[A-Za-z_$][\w$]{0,63}\(\))?[\s;,)]*$/.test(after)) return true;
  const ends = /^\s{0,4}(?:[;,)\]}]|$)/.test(after);
  if (!ends) return false;
  const word = /pass|secret|token|key|auth|cred|cookie|connection/i.exec(key)?.[0]?.toLowerCase();
  // `init.credentials`, `p_token`: a name that holds the key's own word.
  const last = parts.at(-1)!;
  if (word && last.toLowerCase().includes(word) && (parts.length >= 2 || WORDS.test(last))) return true;
  if (parts.length === 1 && wordyName(path)) return true;
  return parts.length === 1 && /^[a-z]{4,24}$/.test(path) && /^\s{0,4}[;,]/.test(after);
}

/** Up to four of `,;)]}` glued to an alphanumeric and five more non-blanks: more of a value. */
const GLUED_VALUE = /[,;)\]}]{1,4}[A-Za-z0-9][^\s]{5}/y;
/**
 * Right after the separator, any six non-blanks past the brackets: no code holds `key=)`
 * (an empty argument), so `password=)!AAAAAAAAAAAA` is a value, where `none).then(cb)` is code.
 */
const LEADING_GLUED_VALUE = /[,;)\]}]{1,4}[^\s,;)\]}][^\s]{5}/y;

/**
 * The value goes on at `at` past a closing bracket or a comma (`password=A)AAAAAAAAAAAA`):
 * its first word does not end there. Read by the `key = value` gate too (allocates nothing).
 */
export function gluedValueAt(text: string, at: number, leading = false): boolean {
  const glued = leading ? LEADING_GLUED_VALUE : GLUED_VALUE;
  glued.lastIndex = at;
  return glued.test(text);
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(
  SECRET_WORDS,
  PLACEHOLDER_LEAD,
  CORS_MODES,
  PROSE_WORD,
  WORDS,
  GLUED_VALUE,
  LEADING_GLUED_VALUE,
);
