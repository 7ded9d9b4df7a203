/**
 * The BPE rank of each token string, in typed arrays: the tokens' UTF-16 units end to end, where
 * each rank's units start, and an open-addressing hash table of ranks. It stands in for
 * `gpt-tokenizer`'s `bytePairStringRankEncoder` (a `Map` of 200,000 strings: the encoder only
 * calls `get`) and, through {@link RankTable.decoder}, for its `bytePairRankDecoder`.
 *
 * Why not strings in a `Map` (issue 47 point 2): building 200,000 strings and map entries that
 * all survive makes every scavenge during the load copy a full young generation (20-35 ms of the
 * main thread's CPU each, more on a busy machine), and one `Map`'s growth past 131,072 entries
 * rehashes all of them in one step. Typed arrays live outside the JavaScript heap: the load
 * allocates a few arrays, the collector has 400,000 fewer objects to mark for the process's
 * life, and the table keeps about 6 MB resident instead of about 20.
 */

/** FNV-1a over UTF-16 units, folded: the start of a key's probe sequence. */
function hashUnits(units: Uint16Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let at = start; at < end; at++) hash = Math.imul(hash ^ units[at]!, 0x01000193);
  return hash ^ (hash >>> 15);
}

/** Token string to rank, with what the encoder uses of a `Map` (`get`). */
export class RankTable {
  /** Every string token's UTF-16 units, rank after rank. */
  readonly #units: Uint16Array;
  /** Rank `r`'s units are `#units[#starts[r] .. #starts[r + 1])`; a byte token has none. */
  readonly #starts: Uint32Array;
  /** Open addressing, linear probing: rank + 1 per slot, 0 when empty. */
  readonly #slots: Int32Array;
  readonly #mask: number;
  /** Ranks that are not valid UTF-8 (a few thousand), as `gpt-tokenizer` keeps them. */
  readonly bytes: ReadonlyMap<number, Uint8Array>;
  /** Ranks in the table (strings and byte tokens). */
  readonly count: number;
  /** String tokens. */
  readonly size: number;

  /** Use {@link RankTableBuilder}. */
  constructor(
    units: Uint16Array,
    starts: Uint32Array,
    slots: Int32Array,
    bytes: ReadonlyMap<number, Uint8Array>,
    size: number,
  ) {
    this.#units = units;
    this.#starts = starts;
    this.#slots = slots;
    this.#mask = slots.length - 1;
    this.bytes = bytes;
    this.count = starts.length - 1;
    this.size = size;
  }

  /** The rank of the token `key`, or undefined. */
  get(key: string): number | undefined {
    return this.rankAt(key, 0, key.length);
  }

  /**
   * The rank of the token `text[start .. end)`, or undefined: `get` of that slice without
   * making it (a cold count looks up millions of pieces; a string each was most of what it
   * allocated, see count-pieces.ts).
   */
  rankAt(text: string, start: number, end: number): number | undefined {
    const length = end - start;
    let hash = 0x811c9dc5;
    for (let at = start; at < end; at++) hash = Math.imul(hash ^ text.charCodeAt(at), 0x01000193);
    const units = this.#units;
    const starts = this.#starts;
    const slots = this.#slots;
    const mask = this.#mask;
    for (let slot = (hash ^ (hash >>> 15)) & mask; ; slot = (slot + 1) & mask) {
      const rank = slots[slot]! - 1;
      if (rank < 0) return undefined;
      const from = starts[rank]!;
      if (starts[rank + 1]! - from !== length) continue;
      let at = 0;
      while (at < length && units[from + at] === text.charCodeAt(start + at)) at++;
      if (at === length) return rank;
    }
  }

  /** The string of `rank`, its bytes when it is not UTF-8, or undefined past the table. */
  decode(rank: number): string | Uint8Array | undefined {
    if (!(rank >= 0 && rank < this.count)) return undefined;
    const bytes = this.bytes.get(rank);
    if (bytes) return bytes;
    // Decoded a part at a time: a spread of a long token could exceed the argument limit.
    const start = this.#starts[rank]!;
    const end = this.#starts[rank + 1]!;
    let text = '';
    for (let at = start; at < end; at += 4096)
      text += String.fromCharCode(...this.#units.subarray(at, Math.min(end, at + 4096)));
    return text;
  }

  /**
   * An array-like view for `bytePairRankDecoder` (read by `decode` only, never by counting):
   * `view[rank]` is the rank's string, or its bytes.
   */
  decoder(): unknown[] {
    return new Proxy([] as unknown[], {
      get: (target, property, receiver) => {
        if (typeof property === 'string') {
          const rank = Number(property);
          if (Number.isInteger(rank) && String(rank) === property) return this.decode(rank);
          if (property === 'length') return this.count;
        }
        return Reflect.get(target, property, receiver);
      },
    });
  }
}

/** Collects ranks in order (strings as UTF-16 units, byte tokens apart), then builds a {@link RankTable}. */
export class RankTableBuilder {
  #units: Uint16Array;
  #starts: Uint32Array;
  #used = 0;
  #count = 0;
  #strings = 0;
  readonly #bytes = new Map<number, Uint8Array>();

  /**
   * Arrays sized for `units` UTF-16 units and `ranks` ranks at most (bounds from the file's
   * size: each unit takes at least a byte of it). Pages of a typed array never written are
   * never mapped; growing (or cutting) one instead copies megabytes in one step, and the first
   * write to each fresh page costs a fault (25-33 ms of CPU per copy of 2 MB, load 15).
   */
  constructor(units = 1 << 20, ranks = 1 << 16) {
    this.#units = new Uint16Array(units);
    this.#starts = new Uint32Array(ranks + 1);
  }

  /** Ranks added so far. */
  get count(): number {
    return this.#count;
  }

  /** The next rank is `text[start .. end)` (by default the whole string). */
  addString(text: string, start = 0, end = text.length): void {
    this.#reserve(end - start);
    const units = this.#units;
    let used = this.#used;
    for (let at = start; at < end; at++) units[used++] = text.charCodeAt(at);
    this.#used = used;
    this.#strings++;
    this.#count++;
  }

  /** The next rank is a byte token (not valid UTF-8). */
  addBytes(bytes: readonly number[]): void {
    this.#reserve(0);
    this.#bytes.set(this.#count, new Uint8Array(bytes));
    this.#count++;
  }

  /** Room for one more rank of `units` units (arrays grown by doubling past the bounds given). */
  #reserve(units: number): void {
    this.#starts[this.#count] = this.#used;
    if (this.#count + 2 > this.#starts.length) {
      const starts = new Uint32Array(this.#starts.length * 2);
      starts.set(this.#starts);
      this.#starts = starts;
    }
    if (this.#used + units > this.#units.length) {
      const grown = new Uint16Array(Math.max(this.#units.length * 2, this.#used + units));
      grown.set(this.#units.subarray(0, this.#used));
      this.#units = grown;
    }
  }

  /**
   * The table: views of the arrays up to what was used (no copy), every string token hashed
   * in. `pause` is called every `every` tokens and awaited when it returns a promise (slices of
   * the caller's clock). A token seen twice keeps its last rank, as `Map#set` would.
   */
  async build(pause: () => Promise<void> | undefined, every = 512): Promise<RankTable> {
    const count = this.#count;
    this.#reserve(0);
    const starts = this.#starts.subarray(0, count + 1);
    const units = this.#units.subarray(0, this.#used);
    let capacity = 1;
    while (capacity < this.#strings * 2) capacity *= 2;
    const slots = new Int32Array(capacity);
    // Its pages written in slices first (one fault each), not at random by the first inserts.
    for (let from = 0; from < capacity; from += every * 64) {
      slots.fill(0, from, from + every * 64);
      const paused = pause();
      if (paused) await paused;
    }
    const mask = capacity - 1;
    let size = 0;
    for (let rank = 0; rank < count; rank++) {
      const start = starts[rank]!;
      const end = starts[rank + 1]!;
      if (end === start) continue;
      let slot = hashUnits(units, start, end) & mask;
      for (; slots[slot] !== 0; slot = (slot + 1) & mask) {
        const other = slots[slot]! - 1;
        if (sameUnits(units, starts[other]!, starts[other + 1]!, start, end)) break;
      }
      if (slots[slot] === 0) size++;
      slots[slot] = rank + 1;
      if (rank % every === 0) {
        const paused = pause();
        if (paused) await paused;
      }
    }
    this.#units = new Uint16Array(0);
    this.#starts = new Uint32Array(0);
    return new RankTable(units, starts, slots, this.#bytes, size);
  }
}

function sameUnits(units: Uint16Array, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (; a < aEnd; a++, b++) if (units[a] !== units[b]) return false;
  return true;
}
