/**
 * A column of 32-bit integers by position, kept in fixed-size typed arrays (issue 47 point 2).
 * A typed array grown by doubling allocates and copies the whole column in one write; the
 * index's per-message columns (its prefix chain, the pairer's rounds and result sites) doubled
 * at the same message, 20 ms or more in one step of a 300k-message cold call. Here a write
 * past the end allocates one chunk of {@link CHUNK} integers (32 KB) at a time.
 */
import { CHUNK } from './chunked-list.js';

const SHIFT = 13;
const MASK = CHUNK - 1;

/** Integers by position, 0 where never written; read through {@link get}, written through {@link set}. */
export class IntColumn {
  readonly #chunks: Int32Array[] = [];

  /** The integer at position `i` (0 where never written, or outside the column). */
  get(i: number): number {
    return this.#chunks[i >>> SHIFT]?.[i & MASK] ?? 0;
  }

  /** Writes `value` (a 32-bit integer) at position `i` (>= 0), adding chunks up to it. */
  set(i: number, value: number): void {
    const at = i >>> SHIFT;
    while (this.#chunks.length <= at) this.#chunks.push(new Int32Array(CHUNK));
    this.#chunks[at]![i & MASK] = value;
  }

  /** The elements of the largest typed array held (at most {@link CHUNK}). */
  get largestChunk(): number {
    return this.#chunks.length > 0 ? CHUNK : 0;
  }

  /** Positions `0` to `length - 1` as one new `Int32Array`. */
  toInt32Array(length: number): Int32Array {
    const out = new Int32Array(length);
    for (let c = 0; c << SHIFT < length && c < this.#chunks.length; c++) {
      const chunk = this.#chunks[c]!;
      out.set(chunk.subarray(0, Math.min(CHUNK, length - (c << SHIFT))), c << SHIFT);
    }
    return out;
  }
}
