import { releaseRegExpCode } from '../process-caches.js';
import { findDecoded } from './find-decoded.js';
import {
  LOOK_ALIKE_END,
  lookAlikeLetter,
  mathAlphanumeric,
  SPARSE_LOOK_ALIKES,
} from './look-alike-letter.js';
import type { MatchSink } from './redaction-scanner.js';

/**
 * Keys a reader sees but the rules do not, found on cheap evidence: an HTML reference to an
 * invisible character between two printable ASCII characters (`ab&#8203;cd`,
 * `ab&ZeroWidthSpace;cd`) or a run of 16 key characters with a fullwidth one among them
 * (`ｓｋ－ｐｒｏｊ－...`, `ghp_ab１cd...`, `ｇｈｐ＿` + ASCII). Only a window around each hit is
 * decoded (find-decoded.ts: invisible characters left out, fullwidth forms read as ASCII) and
 * scanned: decoding and scanning a whole 10 MB text took 500 to 800 ms on CJK prose full of
 * fullwidth letters, and its gates 20 to 35 ms more than main's on HTML and CJK text.
 */

/** Raw characters a window takes on each side of its hit, and how much further it may reach for a boundary. */
const MARGIN = 512;
const REACH = 512;

/**
 * An HTML reference to an invisible character followed by a printable ASCII one (`&#8203;b`,
 * `&#x200B;b`, `&#8203b`, `&zwj;b`). One regex from `&` and no lookbehind: 3 to 5 ms on 10 MB of
 * HTML dense with `&amp;` and `&#39;`, where a literal search per name took 20 ms.
 */
const HTML_INVISIBLE =
  /&(?:#(?:[xX]0*(?:200[b-dB-D]|2060|[fF][eE][fF][fF]|[aA][dD])(?![0-9a-fA-F])|0*(?:820[3-5]|8288|65279|173)(?![0-9]))(?:;|(?!;))|(?:zwn?j|shy|ZeroWidthSpace|NoBreak);)(?=[!-~])/g;

/** Any character past Latin-1: free to test on a one-byte string, which holds no fullwidth form. */
const WIDE = /[\u0100-\uffff]/;

/** The ASCII character of a fullwidth form (U+FF01-FF5E), or `code` itself. */
const narrow = (code: number) => (code >= 0xff01 && code <= 0xff5e ? code - 0xfee0 : code);

/**
 * A printable ASCII character but `,`, `(` and `)`: what a key's run is made of (a password holds
 * `%`, `&`, `=`), and not the fullwidth punctuation of CJK prose (`，`, `（`, `）`).
 */
const keyCode = (code: number) =>
  code >= 0x21 && code <= 0x7e && code !== 0x2c && code !== 0x28 && code !== 0x29;

/**
 * True when the character at `at` is a key character (ASCII, fullwidth, a look-alike letter or a
 * half of a mathematical letter's pair); the first test fails most CJK characters.
 */
const keyAt = (text: string, at: number) => {
  const code = text.charCodeAt(at);
  if (code <= 0x7e || (code >= 0xff01 && code <= 0xff5e)) return keyCode(narrow(code));
  if (code === 0xd835) return mathAlphanumeric(code, text.charCodeAt(at + 1)) > 0;
  if (code >= 0xdc00 && code <= 0xdfff) return mathAlphanumeric(text.charCodeAt(at - 1), code) > 0;
  return lookAlikeLetter(code) > 0;
};

/**
 * Runs of 16 or more key characters (ASCII or fullwidth: every key shape has 16) holding a
 * fullwidth one, as `[start, end)` pairs. Every 16th character is read (any such run holds one),
 * and a run is measured only when the 8 characters before or after it are key characters too
 * (spot checks first): CJK text with fullwidth punctuation and short fullwidth words (`ＵＲＬ`,
 * `２０２４年`, `ｋｕｂｅｒｎｅｔｅｓ`) costs 1 to 3 ms per 10 MB; a one-byte text nothing.
 */
export function fullwidthRuns(text: string, hits: number[]): void {
  if (!WIDE.test(text)) return;
  const length = text.length;
  for (let index = 15; index < length; index += 16) {
    if (!keyAt(text, index)) continue;
    const after = index + 8 < length && keyAt(text, index + 8) && keyAt(text, index + 4);
    if (!after && !(index >= 8 && keyAt(text, index - 8) && keyAt(text, index - 4))) continue;
    let start = index;
    let end = index + 1;
    while (start > 0 && keyAt(text, start - 1)) start--;
    while (end < length && keyAt(text, end)) end++;
    if (end - start >= 16) {
      for (let at = start; at < end; at++) {
        if (text.charCodeAt(at) > 0x7e) {
          hits.push(start, end);
          break;
        }
      }
    }
    index = Math.max(index, end - 1);
  }
}

/**
 * Any look-alike letter's block (IPA to Armenian), a look-alike of Latin Extended or the
 * Letterlike Symbols (`ı`, `ℎ`: not the other accented letters of European prose), or a
 * mathematical letter's high surrogate.
 */
export const LOOK_ALIKE_BLOCK: RegExp = new RegExp(
  `[${SPARSE_LOOK_ALIKES}\\u0250-\\u${(LOOK_ALIKE_END - 1).toString(16).padStart(4, '0')}\\ud835]`,
);

/**
 * What a name read as Latin letters must hold to be worth a window (every secret-named key of the
 * rules has one of these): Russian or Greek prose with `=` and `:` (`адрес=хост`) opens none.
 */
const SECRET_NAME = /pass|pwd|secret|token|key|auth|cred|private|session|cookie|bearer|dsn|conn/i;

/** `text.slice(start, end)` with its look-alike and mathematical letters read as Latin. */
function latinName(text: string, start: number, end: number): string {
  let name = '';
  for (let at = start; at < end; at++) {
    const code = text.charCodeAt(at);
    if (code <= 0x7e) name += text[at];
    else if (code === 0xd835)
      name += String.fromCharCode(mathAlphanumeric(code, text.charCodeAt(at + 1)) || 32);
    else if (code < 0xdc00 || code > 0xdfff) name += String.fromCharCode(lookAlikeLetter(code) || 32);
  }
  return name;
}

/**
 * What a character is in a key's name read back from a separator (bits): none ends the name
 * (ASCII but a word character, `-`, `.`); `ASCII`; `ALIKE`, a look-alike or fullwidth key
 * letter; `PROSE`, a letter no Latin one looks like (`д`, `л`, a CJK one): a word of prose, not
 * a disguised name; `STRONG`, a letter read as one of `b d k n s t w`: every secret word of
 * {@link SECRET_NAME} holds one, and Russian words of look-alike letters (`хор`, `сор`, `ору`:
 * `a c e o p x y`) hold none, so their names are never read as Latin (review-87a).
 */
const ASCII = 1;
const ALIKE = 2;
const PROSE = 4;
const STRONG = 8;

/** `STRONG` for a Latin letter of `b d k n s t w` (either case), else 0. */
const strong = (latin: number) => ('bdknstw'.includes(String.fromCharCode(latin | 0x20)) ? STRONG : 0);

/** The classes of U+0000 to the table's end, then of the fullwidth forms U+FF01 to U+FF5E. */
const NAME_CLASS = new Uint8Array(LOOK_ALIKE_END + 0x5e);
for (let code = 0; code < LOOK_ALIKE_END; code++) {
  const word = /[0-9A-Za-z_.-]/.test(String.fromCharCode(code));
  const latin = lookAlikeLetter(code);
  NAME_CLASS[code] =
    code <= 0x7e ? (word ? ASCII | strong(code) : 0) : latin > 0 ? ALIKE | strong(latin) : PROSE;
}
for (let code = 0x21; code <= 0x7e; code++)
  NAME_CLASS[LOOK_ALIKE_END + code - 0x21] = keyCode(code) ? ALIKE | strong(code) : PROSE;

/** The class of the character at `at` (a mathematical letter's half read with its pair). */
function nameClass(text: string, at: number): number {
  const code = text.charCodeAt(at);
  if (code < LOOK_ALIKE_END) return NAME_CLASS[code]!;
  if (code >= 0xff01 && code <= 0xff5e) return NAME_CLASS[LOOK_ALIKE_END + code - 0xff01]!;
  let latin = 0;
  if (code === 0xd835) latin = mathAlphanumeric(code, text.charCodeAt(at + 1));
  else if (code >= 0xdc00 && code <= 0xdfff) latin = mathAlphanumeric(text.charCodeAt(at - 1), code);
  else latin = lookAlikeLetter(code);
  return latin > 0 ? ALIKE | strong(latin) : PROSE;
}

/**
 * The start of the key name that ends at `end` (64 characters at most) when it holds a
 * look-alike letter, a `STRONG` one and no letter of prose, else -1.
 */
function disguisedNameStart(text: string, end: number): number {
  const limit = Math.max(0, end - 64);
  let start = end;
  let seen = 0;
  while (start > limit) {
    const kind = nameClass(text, start - 1);
    if (kind === 0) break;
    if (kind & PROSE) return -1;
    seen |= kind;
    start--;
  }
  return seen & ALIKE && seen & STRONG ? start : -1;
}

/**
 * Key names with a look-alike letter before a `=` or `:` (`раssword=`, `"𝑡𝑜𝑘𝑒𝑛": `), as
 * `[start, end)` pairs: from each separator (found with `indexOf`) the name before it (a quote
 * and two spaces skipped, 64 characters at most) is read back, one table look a character.
 * Text with no Greek, Cyrillic or mathematical letter costs one regex test.
 */
export function lookAlikeKeys(text: string, hits: number[]): void {
  if (!LOOK_ALIKE_BLOCK.test(text)) return;
  for (const separator of ['=', ':']) {
    for (let at = text.indexOf(separator); at >= 0; at = text.indexOf(separator, at + 1)) {
      let end = at;
      for (let skip = 0; skip < 3 && end > 0; skip++) {
        const code = text.charCodeAt(end - 1);
        if (code !== 0x20 && code !== 0x22 && code !== 0x27) break;
        end--;
      }
      const start = disguisedNameStart(text, end);
      if (start >= 0 && SECRET_NAME.test(latinName(text, start, end))) hits.push(start, at + 1);
    }
  }
}

/**
 * HTML references to invisible characters between two printable ASCII characters, as
 * `[start, end)` pairs. Percent-encoded ones open the whole copy (find-decoded.ts' gate, which
 * looks for `%` already: a second search took 2 to 3 ms per 10 MB of CJK text).
 */
export function encodedInvisibles(text: string, hits: number[]): void {
  if (!text.includes('&')) return;
  HTML_INVISIBLE.lastIndex = 0;
  let match = HTML_INVISIBLE.exec(text);
  while (match !== null) {
    const before = text.charCodeAt(match.index - 1);
    if (before >= 0x21 && before <= 0x7e) hits.push(match.index, HTML_INVISIBLE.lastIndex);
    match = HTML_INVISIBLE.exec(text);
  }
}

/** True for a character a key does not cross: whitespace, a control, a CJK character, a quote. */
const boundary = (code: number) =>
  code <= 0x20 ||
  code === 0x22 ||
  code === 0x27 ||
  code === 0x3c ||
  code === 0x3e ||
  (code > 0x7e && code < 0xff01) ||
  code > 0xff5e;

/** `at`, moved by `step` (at most {@link REACH} characters) until a boundary. */
function toBoundary(text: string, at: number, step: 1 | -1): number {
  const limit = step < 0 ? Math.max(0, at - REACH) : Math.min(text.length, at + REACH);
  let index = at;
  while (index !== limit && !boundary(text.charCodeAt(step < 0 ? index - 1 : index))) index += step;
  return index;
}

/**
 * The hits of the text a redaction's passes were last given (redactor.ts makes one per
 * redactor and empties it after each redaction): each pass gets the previous one's output, the
 * same string when that pass changed nothing, so a text is looked at once, not once a pass.
 */
export interface HiddenKeyLook {
  text: string | undefined;
  hits: readonly number[];
}

/** The hits of `raw` (`[start, end)` pairs): `look`'s when it looked at `raw` last. */
function hiddenKeyHits(raw: string, look: HiddenKeyLook | undefined): readonly number[] {
  if (look?.text === raw) return look.hits;
  const hits: number[] = [];
  encodedInvisibles(raw, hits);
  fullwidthRuns(raw, hits);
  lookAlikeKeys(raw, hits);
  if (look) {
    look.text = raw;
    look.hits = hits;
  }
  return hits;
}

/**
 * Scans `raw`'s decoded windows around each hit with `find` and replaces each match's raw span
 * (its encoded characters included). Returns `raw` itself when there is no hit or no match.
 */
export function redactHiddenKeys(
  raw: string,
  find: (text: string, sink: MatchSink) => void,
  look?: HiddenKeyLook,
): string {
  const hits = hiddenKeyHits(raw, look);
  if (hits.length === 0) return raw;
  const windows: number[] = [];
  for (let pair = 0; pair < hits.length; pair += 2) {
    windows.push(
      toBoundary(raw, Math.max(0, hits[pair]! - MARGIN), -1),
      toBoundary(raw, Math.min(raw.length, hits[pair + 1]! + MARGIN), 1),
    );
  }
  let out = '';
  let copied = 0;
  const sink: MatchSink = (start, end, replacement) => {
    if (start < copied) return;
    out += raw.slice(copied, start) + replacement;
    copied = end;
  };
  for (const [from, to] of merged(windows)) findDecoded(raw, from, to, find, sink);
  return copied === 0 ? raw : out + raw.slice(copied);
}

/** The windows (`[start, end)` pairs, in any order) sorted and joined where they touch. */
function merged(windows: number[]): [number, number][] {
  const pairs: [number, number][] = [];
  for (let index = 0; index < windows.length; index += 2) pairs.push([windows[index]!, windows[index + 1]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const pair of pairs) {
    const last = out[out.length - 1];
    if (last !== undefined && pair[0] <= last[1]) last[1] = Math.max(last[1], pair[1]);
    else out.push(pair);
  }
  return out;
}

releaseRegExpCode(HTML_INVISIBLE);
releaseRegExpCode(WIDE);
releaseRegExpCode(LOOK_ALIKE_BLOCK);
releaseRegExpCode(SECRET_NAME);
