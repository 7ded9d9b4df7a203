/**
 * Counting long texts in slices: BPE work is quadratic in the length of one pre-token, so a
 * long text is cut at word boundaries (or hard, with a correction across the cut) and each
 * slice counted apart.
 */

import { runSteps, type Steps } from '../time-slice.js';

/**
 * Texts longer than this are counted in slices. BPE work is quadratic in the length of one
 * pre-token, so 100 KB of one repeated character takes seconds unsliced; slices of about
 * 2,000 characters bound that at well under 50 ms per 100 KB with under 0.1% error.
 * @default 2048
 */
export const DEFAULT_SLICE_CHARS = 2048;

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 9 || code === 13;
}

/**
 * Counts `text` with `encode`, slicing long texts at word boundaries (a space that starts
 * the next word), or hard at `sliceChars` where there is none (runs of one character,
 * base64, CJK without punctuation).
 */
export function countInSlices(
  text: string,
  encode: (text: string) => number,
  sliceChars = DEFAULT_SLICE_CHARS,
): number {
  if (text.length <= sliceChars) return encode(text);
  return runSteps(countInSlicesSteps(text, encode, sliceChars));
}

/**
 * {@link countInSlices} as steps: yields after each slice, so that one very long text (a
 * 10 MB tool output) is counted across turns of the event loop (`runStepsYielding`). The
 * count is the same.
 */
export function* countInSlicesSteps(
  text: string,
  encode: (text: string) => number,
  sliceChars = DEFAULT_SLICE_CHARS,
): Steps<number> {
  if (text.length <= sliceChars) return encode(text);
  let total = 0;
  let start = 0;
  const lookBack = sliceChars >> 2;
  while (start < text.length) {
    let end = Math.min(start + sliceChars, text.length);
    if (end < text.length) {
      let cut = -1;
      for (let i = end; i > end - lookBack; i--) {
        if (
          text.charCodeAt(i) === 32 &&
          !isSpace(text.charCodeAt(i - 1)) &&
          !isSpace(text.charCodeAt(i + 1))
        ) {
          cut = i;
          break;
        }
      }
      if (cut > start) end = cut;
      else {
        // Never split a surrogate pair.
        if ((text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end -= 1;
        // A hard cut splits a token: correct by counting a small window across the cut.
        let from = Math.max(start, end - BOUNDARY_WINDOW);
        if ((text.charCodeAt(from) & 0xfc00) === 0xdc00) from += 1;
        let to = Math.min(text.length, end + BOUNDARY_WINDOW);
        if ((text.charCodeAt(to - 1) & 0xfc00) === 0xd800) to -= 1;
        const left = text.slice(from, end);
        const right = text.slice(end, to);
        total += encode(left + right) - encode(left) - encode(right);
      }
    }
    total += encode(text.slice(start, end));
    start = end;
    yield;
  }
  return total;
}

/** Characters on each side of a hard slice cut counted again to correct the split token. */
export const BOUNDARY_WINDOW = 48;
