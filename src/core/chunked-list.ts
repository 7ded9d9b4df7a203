/**
 * A list kept as fixed-size arrays (issue 47 point 2). A JavaScript array grows by copying
 * every element into a backing store 1.5 times the size, in one `push`: past 100k elements
 * that one push holds the event loop 13-30 ms on a loaded machine (a fresh large allocation
 * faulted in, then the copy), and several per-message columns pushed in step grow at the same
 * message, so their copies add up in one stretch (60-120 ms for four columns of 300k tiny
 * messages). Here the largest array ever grown or allocated holds {@link CHUNK} elements.
 */

/** Elements per chunk: 8,192 pointers (64 KB), an ordinary young-generation object. */
export const CHUNK = 8_192;
const SHIFT = 13;
const MASK = CHUNK - 1;

/** What reads a list by position: an array or a {@link ChunkedList}. */
export interface Positional<T> {
  readonly length: number;
  at(i: number): T | undefined;
}

/** A list of values grown by {@link push}, read and written by position. */
export class ChunkedList<T> implements Iterable<T>, Positional<T> {
  readonly #chunks: T[][] = [];
  #length = 0;

  /** The number of values held. */
  get length(): number {
    return this.#length;
  }

  /** The elements of the largest chunk (at most {@link CHUNK}). */
  get largestChunk(): number {
    let largest = 0;
    for (const chunk of this.#chunks) largest = Math.max(largest, chunk.length);
    return largest;
  }

  /** Appends `value`. */
  push(value: T): void {
    const at = this.#length >>> SHIFT;
    if (at === this.#chunks.length) this.#chunks.push([]);
    this.#chunks[at]!.push(value);
    this.#length++;
  }

  /**
   * The value at position `i`, counted from the end when negative as `Array.prototype.at`
   * does (a {@link Positional} reads the same from either); undefined outside the list.
   */
  at(i: number): T | undefined {
    if (i < 0) i += this.#length;
    if (i < 0 || i >= this.#length) return undefined;
    return this.#chunks[i >>> SHIFT]![i & MASK];
  }

  /** Replaces the value at position `i` (a position inside the list). */
  set(i: number, value: T): void {
    if (i < 0 || i >= this.#length) throw new RangeError(`position ${i} outside a list of ${this.#length}`);
    this.#chunks[i >>> SHIFT]![i & MASK] = value;
  }

  /** Keeps the first `length` values (no change when the list is not longer). */
  truncate(length: number): void {
    if (length >= this.#length) return;
    const keep = Math.max(0, length);
    const chunks = (keep + MASK) >>> SHIFT;
    this.#chunks.length = chunks;
    if (chunks > 0) this.#chunks[chunks - 1]!.length = keep - ((chunks - 1) << SHIFT);
    this.#length = keep;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (const chunk of this.#chunks) yield* chunk;
  }

  /** `fn` of every value, in order, as one new array made at its size (see {@link toArray}). */
  map<U>(fn: (value: T, i: number) => U): U[] {
    const mapped: U[][] = new Array(this.#chunks.length);
    for (let c = 0; c < this.#chunks.length; c++) {
      const base = c << SHIFT;
      mapped[c] = this.#chunks[c]!.map((value, k) => fn(value, base + k));
    }
    return ([] as U[]).concat(...mapped);
  }

  /**
   * `prefix`'s values then these, as one new array allocated at its size (no growth copies:
   * one allocation of the final size, ~10 ms for 300k values on a loaded machine, so a caller
   * building several gives the loop a turn between them).
   */
  toArray(prefix: readonly T[] = []): T[] {
    // `concat` sizes the result once and copies the chunks into it (a packed array).
    return prefix.concat(...this.#chunks);
  }
}
