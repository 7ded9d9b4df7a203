/**
 * The rank table of a `gpt-tokenizer` encoding, read from its rank file (`bpeRanks/<name>.js`:
 * `const cN = [` ... `];` blocks of array literals, one element per line, a byte array over
 * several lines) as data, in slices of a few milliseconds.
 *
 * Each string is cut from the file's bytes (`Buffer#toString('utf8', start, end)`): a fresh
 * string, as `require` would give, built in about a tenth of a microsecond. Parsing chunks of
 * lines with `JSON.parse` instead made V8 internalize every value of up to 10 characters (most of
 * the 200,000): the process's string table grew by as many, and its resizes held the loop
 * 20-30 ms at a time, inside one chunk (issue 47 point 2). Only the few lines with a backslash
 * (about 3,000) are read by {@link parseRankChunk}.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { runInThisContext } from 'node:vm';
import type { TimeSlice } from '../time-slice.js';
import type { EncodingName } from './model-table.js';

const requireFromHere = createRequire(import.meta.url);

/**
 * JavaScript string escapes and raw controls that JSON spells otherwise (an escaped backslash
 * first; a tab only inside a string element's line, after its indentation).
 */
const JS_ONLY =
  /\\\\|\\x([0-9A-Fa-f]{2})|\\0(?![0-9])|\\v|\\'|[\u0000-\u0008\u000b-\u001f]|(?<=(?:^|\n)\t"[^\n]*)\t/g;

function toJsonEscape(match: string, hex: string | undefined): string {
  if (match === '\\\\') return match;
  if (hex !== undefined) return `\\u00${hex}`;
  if (match === '\\0') return '\\u0000';
  if (match === '\\v') return '\\u000b';
  if (match === "\\'") return "'";
  return `\\u${match.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Chunks read as code since the process started (tests check it stays near zero). */
export let rankChunksEvaluated = 0;

/**
 * The elements of array-literal lines, read as JSON once JavaScript's own escapes are spelled as
 * JSON's. Evaluating them as code kept about 10 MB alive for the process's life (the compiled
 * scripts and the file's text they slice), after the encoding was released. Lines JSON still
 * cannot read are evaluated as JavaScript.
 */
export function parseRankChunk(lines: string): unknown[] {
  const body = lines.trimEnd().replace(JS_ONLY, toJsonEscape);
  try {
    return JSON.parse(`[${body.endsWith(',') ? body.slice(0, -1) : body}]`) as unknown[];
  } catch {
    rankChunksEvaluated++;
    return runInThisContext(`[${lines}]`) as unknown[];
  }
}

const TAB = 9;
const NEWLINE = 10;
const QUOTE = 34;
const COMMA = 44;
const BACKSLASH = 92;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

/** Elements read between two looks at the clock. */
const ELEMENTS_PER_CHECK = 256;

function layoutError(name: EncodingName, at: number): Error {
  return new Error(`gpt-tokenizer/bpeRanks/${name}: unexpected layout at byte ${at}`);
}

/**
 * The rank table of `name` (strings, and byte arrays for ranks that are not UTF-8), read in
 * slices on `clock`. Throws when the file is laid out otherwise (the caller then loads the
 * encoding through `require`).
 */
export async function readRanks(name: EncodingName, clock: TimeSlice): Promise<unknown[]> {
  const file = await readFile(requireFromHere.resolve(`gpt-tokenizer/bpeRanks/${name}`));
  await clock.pause();
  const ranks: unknown[] = [];
  for (let at = 0; ; ) {
    const open = file.indexOf(' = [\n', at);
    if (open < 0) break;
    const close = file.indexOf('\n];', open);
    if (close < 0) throw layoutError(name, open);
    // The next backslash at or after the current line (-1: none left in the file).
    let backslash = file.indexOf(BACKSLASH, open);
    for (let line = open + 5; line < close; ) {
      if (file[line] !== TAB) throw layoutError(name, line);
      let end = file.indexOf(NEWLINE, line);
      if (end < 0 || end > close) end = close;
      if (file[line + 1] === QUOTE) {
        const last = file[end - 1] === COMMA ? end - 2 : end - 1;
        if (last <= line + 1 || file[last] !== QUOTE) throw layoutError(name, line);
        if (backslash >= 0 && backslash < line) backslash = file.indexOf(BACKSLASH, line);
        if (backslash >= 0 && backslash < last) {
          // An escape: the line read as a literal (the few of them).
          ranks.push(parseRankChunk(file.toString('utf8', line, end))[0]);
          backslash = file.indexOf(BACKSLASH, end);
        } else ranks.push(file.toString('utf8', line + 2, last));
      } else if (file[line + 1] === OPEN_BRACKET) {
        // A byte array, one number a line: numbers only up to its bracket.
        const stop = file.indexOf(CLOSE_BRACKET, line);
        if (stop < 0 || stop > close) throw layoutError(name, line);
        ranks.push(JSON.parse(file.toString('latin1', line + 1, stop + 1)) as number[]);
        end = file.indexOf(NEWLINE, stop);
        if (end < 0 || end > close) end = close;
      } else throw layoutError(name, line);
      line = end + 1;
      if (ranks.length % ELEMENTS_PER_CHECK === 0 && clock.due()) await clock.pause();
    }
    at = close + 3;
  }
  return ranks;
}
