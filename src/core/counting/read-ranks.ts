/**
 * The rank table of a `gpt-tokenizer` encoding, read from its rank file (`bpeRanks/<name>.js`:
 * `const cN = [` ... `];` blocks of array literals, one element per line, a byte array over
 * several lines) as data, into a {@link RankTable}, in slices of a few milliseconds.
 *
 * A token without escapes is copied from the file's text as it stands (what its literal means).
 * Parsing chunks of lines with `JSON.parse` instead made V8 internalize every value of up to 10
 * characters (most of the 200,000): the process's string table grew by as many, and its resizes
 * held the loop 20-30 ms at a time inside one chunk (issue 47 point 2). Only the few lines with
 * a backslash (about 3,000) are read by {@link parseRankChunk}.
 */
import { readFile } from 'node:fs/promises';
import { runInThisContext } from 'node:vm';
import { releaseRegExpCode } from '../process-caches.js';
import type { TimeSlice } from '../time-slice.js';
import { gptTokenizerFile } from './gpt-tokenizer-file.js';
import type { EncodingName } from './model-table.js';
import { type RankTable, RankTableBuilder } from './rank-table.js';

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
const OPEN_BRACKET = 91;

/**
 * Bytes of the file decoded at a time. Decoding the whole file (2.4 MB, much of it not ASCII)
 * at once took 40 ms of CPU in one step; a piece takes well under a millisecond.
 */
const PIECE_BYTES = 8 * 1024;

function layoutError(name: EncodingName, at: number): Error {
  return new Error(`gpt-tokenizer/bpeRanks/${name}: unexpected layout at ${at}`);
}

/** True when the line at byte `at` starts an element (a tab, then a string or an array). */
function startsElement(file: Buffer, at: number): boolean {
  return file[at] === TAB && (file[at + 1] === QUOTE || file[at + 1] === OPEN_BRACKET);
}

/**
 * Adds the elements of `text` (whole lines of a rank block, each element complete) to `builder`.
 * A token without escapes is copied from the text as it stands (what its literal means).
 */
function addElements(name: EncodingName, text: string, builder: RankTableBuilder): void {
  // The next backslash at or after the current line (-1: none left).
  let backslash = text.indexOf('\\');
  for (let line = 0; line < text.length; ) {
    if (text.charCodeAt(line) !== TAB) throw layoutError(name, line);
    let end = text.indexOf('\n', line);
    if (end < 0) end = text.length;
    const kind = text.charCodeAt(line + 1);
    if (kind === QUOTE) {
      const last = text.charCodeAt(end - 1) === COMMA ? end - 2 : end - 1;
      if (last <= line + 1 || text.charCodeAt(last) !== QUOTE) throw layoutError(name, line);
      if (backslash >= 0 && backslash < line) backslash = text.indexOf('\\', line);
      if (backslash >= 0 && backslash < last) {
        // An escape: the line read as a literal (about 3,000 of them).
        const value = parseRankChunk(text.slice(line, end))[0];
        if (typeof value !== 'string') throw layoutError(name, line);
        builder.addString(value);
        backslash = text.indexOf('\\', end);
      } else builder.addString(text, line + 2, last);
    } else if (kind === OPEN_BRACKET) {
      // A byte array, its numbers over one or more lines up to its bracket.
      const stop = text.indexOf(']', line);
      if (stop < 0) throw layoutError(name, line);
      builder.addBytes(JSON.parse(text.slice(line + 1, stop + 1)) as number[]);
      end = text.indexOf('\n', stop);
      if (end < 0) end = text.length;
    } else throw layoutError(name, line);
    line = end + 1;
  }
}

/**
 * The rank table of `name` read in slices on `clock`: the file decoded a piece of whole
 * elements at a time, each string token's units copied into the table's arrays (no string per
 * token), a byte token (not UTF-8) kept as bytes. Throws when the file is laid out otherwise
 * (the caller then loads the encoding through `require`).
 */
export async function readRanks(name: EncodingName, clock: TimeSlice): Promise<RankTable> {
  const file = await readFile(gptTokenizerFile(`bpeRanks/${name}`));
  await clock.pause();
  // Bounds: a unit takes at least a byte of the file, an element at least five (`\t"x",`).
  const builder = new RankTableBuilder(file.length, Math.ceil(file.length / 5));
  for (let at = 0; ; ) {
    const open = file.indexOf(' = [\n', at);
    if (open < 0) break;
    const close = file.indexOf('\n];', open);
    if (close < 0) throw layoutError(name, open);
    for (let start = open + 5; start < close; ) {
      // Up to a line that starts an element (a byte array may span lines), or the block's end.
      let end = Math.min(start + PIECE_BYTES, close);
      while (end < close && !(file[end - 1] === NEWLINE && startsElement(file, end))) {
        const next = file.indexOf(NEWLINE, end);
        end = next < 0 || next >= close ? close : next + 1;
      }
      // Without the newline before the next element.
      addElements(name, file.toString('utf8', start, end < close ? end - 1 : end), builder);
      start = end;
      if (clock.due()) await clock.pause();
    }
    at = close + 3;
  }
  return builder.build(() => (clock.due() ? clock.pause() : undefined));
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(JS_ONLY);
