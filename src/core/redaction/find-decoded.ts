import { releaseRegExpCode } from '../process-caches.js';
import { lookAlikeLetter, mathAlphanumeric } from './look-alike-letter.js';
import type { MatchSink } from './redaction-scanner.js';

/**
 * Secrets written with JSON escapes: unicode escapes (`\u0067hp_...` for `ghp_...`, also
 * escaped again inside JSON-encoded tool arguments: `\\u0067hp_...`) and escaped slashes
 * (`https:\/\/user:pw@host`, a base64 key's `\/`, as PHP's `json_encode` and Slack's API write
 * them): the rules run on a copy where the escapes of printable ASCII characters are decoded,
 * and each match is mapped back onto the raw text. Quotes and backslashes stay escaped, so the
 * copy keeps the text's JSON structure.
 *
 * Percent escapes of printable ASCII characters are decoded the same way (`%3D`, `%2F`, `%40`:
 * a URL inside a URL's query, a form body); a quote and a backslash stay encoded.
 *
 * The copy also leaves out invisible characters inside a key (a zero-width space, joiner or
 * non-joiner, a word joiner, a byte order mark, a soft hyphen: `ghp_ab\u200bcd...`, as text
 * pasted from a chat carries, or a model writes to slip a key past a filter), which a reader
 * does not see, and the JSON escapes of those characters (`ghp_ab\\u200bcd...`, as Python's
 * `json.dumps` writes a zero-width space) the same way.
 */

/** Any escape of a printable ASCII character, at any depth up to 7 backslashes. */
const ESCAPE = /\\{1,7}(?:u00[2-7][0-9a-fA-F]|\/)/;

/** A percent escape of a printable ASCII character (`%3D`, `%2F`: a URL-encoded value). */
const PERCENT = /%[2-7][0-9a-fA-F]/;

/**
 * What hides a key from the rules: an invisible character (zero-width space, joiner or
 * non-joiner, word joiner, byte order mark, soft hyphen) between two printable ASCII characters
 * (`ab\u200bcd`; not an emoji's joiner, nor a soft hyphen between words). It starts with the
 * invisible class: 10 MB of text without one costs 8 to 18 ms (ASCII or CJK, on a loaded
 * machine). `includes` per character is no cheaper: V8 looks for one byte of a two-byte
 * character, and `\u200b`'s `0x20` is every space.
 */
const HIDES_KEY =
  /[\u00ad\u200b-\u200d\u2060\ufeff](?<=[!-~][\u00ad\u200b-\u200d\u2060\ufeff])[\u00ad\u200b-\u200d\u2060\ufeff]*(?=[!-~])/;

/**
 * An invisible character written as its percent-encoded UTF-8 (`%E2%80%8B`, a URL or a form
 * body) or as an HTML character reference (`&#8203;`, `&#x200B;`, `&ZeroWidthSpace;`, `&shy;`:
 * text copied from a web page, an HTML-escaped log): the reader sees no character there either.
 */
const ENCODED_INVISIBLE =
  /%(?:e2%80%8[b-d]|e2%81%a0|ef%bb%bf|c2%ad)|&(?:#(?:x0*(?:200[b-d]|2060|feff|ad)(?![0-9a-f])|0*(?:820[3-5]|8288|65279|173)(?![0-9]))|zwn?j;|ZeroWidthSpace;|NoBreak;|shy;)/i;

/**
 * Percent-encoded UTF-8 of an invisible character between two printable ASCII characters
 * (`ab%E2%80%8Bcd`): read after the search for `%` that {@link PERCENT} needs anyway.
 */
const PERCENT_HIDES_KEY = /%(?<=[!-~]%)(?:e2%80%8[b-d]|e2%81%a0|ef%bb%bf|c2%ad)(?=[!-~])/i;

/** A JSON escape of an invisible character (`\\u200b`, `\\u00ad`, `\\ufeff`), at any depth up to 7. */
const ESCAPED_INVISIBLE = /\\{1,7}u(?:200[b-dB-D]|2060|[fF][eE][fF][fF]|00[aA][dD])/;

const invisible = (code: number) =>
  code === 0xad || (code >= 0x200b && code <= 0x200d) || code === 0x2060 || code === 0xfeff;

/** A decoded copy and where its escapes were: decoded index, extra raw characters so far. */
interface Decoded {
  readonly text: string;
  readonly at: Int32Array;
  readonly extra: Int32Array;
  readonly count: number;
}

const hexValue = (code: number) =>
  code >= 48 && code <= 57
    ? code - 48
    : code >= 97 && code <= 102
      ? code - 87
      : code >= 65 && code <= 70
        ? code - 55
        : -1;

/**
 * The printable ASCII character a `\u00XX` escape at `at` (after its backslashes) stands for, or
 * -1. An escaped slash (`\/`) is taken apart in {@link decode}, a quote (`\u0022`) there too.
 */
function escapedCode(raw: string, at: number): number {
  if (raw.charCodeAt(at) !== 117 || raw.charCodeAt(at + 1) !== 48 || raw.charCodeAt(at + 2) !== 48) return -1;
  const high = hexValue(raw.charCodeAt(at + 3));
  const low = hexValue(raw.charCodeAt(at + 4));
  if (high < 2 || high > 7 || low < 0) return -1;
  const code = high * 16 + low;
  // A backslash stays escaped: decoding it would escape the character after it. `'` and a
  // backtick end no JSON string (.NET writes them `\u0027`, `\u0060`).
  return code === 0x5c || code === 0x7f ? -1 : code;
}

/** The printable ASCII character `%XX` at `at` stands for, or -1 (a quote and a backslash stay). */
function percentCode(raw: string, at: number): number {
  const high = hexValue(raw.charCodeAt(at + 1));
  const low = hexValue(raw.charCodeAt(at + 2));
  if (high < 2 || high > 7 || low < 0) return -1;
  const code = high * 16 + low;
  return code === 0x22 || code === 0x5c || code === 0x7f ? -1 : code;
}

/** True when `raw` holds a JSON escape of an invisible character at `at` (after its backslashes). */
function escapedInvisible(raw: string, at: number): boolean {
  if (raw.charCodeAt(at) !== 117) return false;
  let code = 0;
  for (let digit = 1; digit <= 4; digit++) {
    const value = hexValue(raw.charCodeAt(at + digit));
    if (value < 0) return false;
    code = code * 16 + value;
  }
  return invisible(code);
}

/** The length of an encoded invisible character ({@link ENCODED_INVISIBLE}) at `at`, or 0. */
function encodedInvisibleLength(raw: string, at: number): number {
  // The regex only after a character that can start one (`%e`, `%c`, `&#`, `&z`, `&s`, `&n`).
  const next = raw.charCodeAt(at + 1) | 0x20;
  if (
    raw.charCodeAt(at) === 37
      ? next !== 0x65 && next !== 0x63
      : next !== 0x23 && next !== 0x7a && next !== 0x73 && next !== 0x6e
  )
    return 0;
  ENCODED_INVISIBLE_AT.lastIndex = at;
  const match = ENCODED_INVISIBLE_AT.exec(raw);
  if (!match) return 0;
  // A numeric reference may end without its `;` (browsers read `&#8203` too).
  const length = match[0].length;
  return match[0].startsWith('&#') && raw.charCodeAt(at + length) === 59 ? length + 1 : length;
}

const ENCODED_INVISIBLE_AT = new RegExp(ENCODED_INVISIBLE.source, 'iy');

/**
 * One linear pass: the copy's characters in a typed array, the escapes' places beside it. A
 * quote written `\u0022` (.NET's System.Text.Json writes every quote in a string so) becomes
 * the same quote escaped with backslashes (`\"`; `\\\"` at the next depth), so the copy keeps
 * the text's JSON structure; at a depth past 5 it stays as it is.
 */
function decode(raw: string): Decoded {
  const units = new Uint16Array(raw.length);
  const places = new Places();
  let length = 0;
  for (let index = 0; index < raw.length; index++) {
    const code = raw.charCodeAt(index);
    if (code === 92) {
      let slashes = 1;
      while (slashes < 7 && raw.charCodeAt(index + slashes) === 92) slashes++;
      const slash = raw.charCodeAt(index + slashes) === 47;
      const decoded = slash ? 47 : escapedCode(raw, index + slashes);
      // A quote keeps 2 * depth - 1 backslashes before it.
      const kept = decoded === 0x22 ? 2 * slashes - 1 : 0;
      if (decoded >= 0 && kept <= 9) {
        // `\u00XX` is 5 characters after its backslashes, `\/` one.
        const rawLength = slash ? slashes + 1 : slashes + 5;
        places.add(length, rawLength - 1 - kept);
        for (let written = 0; written < kept; written++) units[length++] = 92;
        units[length++] = decoded;
        index += rawLength - 1;
        continue;
      }
      if (!slash && escapedInvisible(raw, index + slashes)) {
        // An escaped invisible character is left out too: all its raw characters are extra.
        places.add(length, slashes + 5);
        index += slashes + 4;
        continue;
      }
    }
    const hidden = code === 37 || code === 38 ? encodedInvisibleLength(raw, index) : 0;
    if (hidden > 0) {
      // Left out with all its raw characters, as an escaped invisible character is.
      places.add(length, hidden);
      index += hidden - 1;
      continue;
    }
    const percent = code === 37 ? percentCode(raw, index) : -1;
    if (percent >= 0) {
      places.add(length, 2);
      units[length++] = percent;
      index += 2;
      continue;
    }
    if (code >= 0xad && invisible(code)) {
      // Left out: no character of the copy stands for it.
      places.add(length, 1);
      continue;
    }
    if (code === 0xd835) {
      // A mathematical letter or digit (`𝐩`): two raw characters read as one.
      const letter = mathAlphanumeric(code, raw.charCodeAt(index + 1));
      if (letter > 0) {
        places.add(length, 1);
        units[length++] = letter;
        index++;
        continue;
      }
    }
    // A fullwidth form reads as its ASCII character, one for one (no place to note), and so does
    // a look-alike letter (a Cyrillic `а`).
    units[length++] =
      code >= 0xff01 && code <= 0xff5e && code !== 0xff02 && code !== 0xff3c
        ? code - 0xfee0
        : code >= 0x100
          ? lookAlikeLetter(code) || code
          : code;
  }
  // Buffer's UTF-16 decoding, not TextDecoder's: 4 to 6 ms for 10 MB of ASCII, not 170 to 400.
  const text = Buffer.from(units.buffer, 0, length * 2).toString('utf16le');
  return { text, ...places.done() };
}

/** Where the escapes of a decoded copy are: decoded index, extra raw characters so far. */
class Places {
  at: Int32Array<ArrayBuffer> = new Int32Array(64);
  extra: Int32Array<ArrayBuffer> = new Int32Array(64);
  count = 0;
  skipped = 0;

  /** An escape at decoded index `at`, `more` raw characters longer than what the copy holds. */
  add(at: number, more: number): void {
    if (this.count === this.at.length) {
      this.at = grow(this.at);
      this.extra = grow(this.extra);
    }
    this.skipped += more;
    this.at[this.count] = at;
    this.extra[this.count] = this.skipped;
    this.count++;
  }

  done(): Omit<Decoded, 'text'> {
    return { at: this.at, extra: this.extra, count: this.count };
  }
}

function grow(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

/** The raw index of a decoded boundary: escapes that end before it add their extra length. */
function rawIndex(decoded: Decoded, index: number): number {
  let low = 0;
  let high = decoded.count;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (decoded.at[middle]! < index) low = middle + 1;
    else high = middle;
  }
  return index + (low === 0 ? 0 : decoded.extra[low - 1]!);
}

/**
 * True when `text` holds an escape of a printable ASCII character, or hides a key from the
 * rules (`HIDES_KEY`). Cheap: a search for a backslash and `u00` or `/` first (run it on the
 * caller's flat input, not on a text built from pieces, which each search would flatten again).
 */
export function hasUnicodeEscape(text: string): boolean {
  return (
    ((text.includes('\\u00') || text.includes('\\/')) && ESCAPE.test(text)) ||
    HIDES_KEY.test(text) ||
    (text.includes('\\u') && ESCAPED_INVISIBLE.test(text)) ||
    (text.includes('%') && (PERCENT.test(text) || PERCENT_HIDES_KEY.test(text)))
  );
}

/**
 * Runs `find` on the decoded copy of `raw` (a text with {@link hasUnicodeEscape}) and replaces
 * each match's raw span (escapes included).
 */
export function redactDecoded(raw: string, find: (text: string, sink: MatchSink) => void): string {
  let out = '';
  let copied = 0;
  findDecoded(raw, 0, raw.length, find, (start, end, replacement) => {
    out += raw.slice(copied, start) + replacement;
    copied = end;
  });
  return copied === 0 ? raw : out + raw.slice(copied);
}

/**
 * Runs `find` on the decoded copy of `raw.slice(from, to)` and gives `sink` each match's span in
 * `raw` (escapes included): hidden-key-windows.ts decodes only windows around its hits.
 */
export function findDecoded(
  raw: string,
  from: number,
  to: number,
  find: (text: string, sink: MatchSink) => void,
  sink: MatchSink,
): void {
  const decoded = decode(from === 0 && to === raw.length ? raw : raw.slice(from, to));
  find(decoded.text, (start, end, replacement) =>
    sink(from + rawIndex(decoded, start), from + rawIndex(decoded, end), replacement),
  );
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(ESCAPE);
releaseRegExpCode(HIDES_KEY);
releaseRegExpCode(ESCAPED_INVISIBLE);
releaseRegExpCode(PERCENT);
releaseRegExpCode(PERCENT_HIDES_KEY);
releaseRegExpCode(ENCODED_INVISIBLE_AT);
