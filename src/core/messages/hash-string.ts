/**
 * The 64-bit string hash behind message identity and the content cache (cyrb53, both lanes
 * kept), printed as one flat base-36 string, or kept as two 32-bit lanes.
 */

/** The two lanes of the last {@link hashLanes}: high, low (as {@link hashString} prints them). */
const lanes = new Uint32Array(2);

/**
 * 64-bit string hash (the two 32-bit lanes of cyrb53, both kept): fast, well distributed,
 * not cryptographic. Used as message identity and cache key. `prefix` goes before the digits
 * in the same flat string (`tool-…`: one string, not a concatenation kept as three).
 */
export function hashString(text: string, seed = 0, prefix = ''): string {
  hashLanes(text, seed);
  return base36Pair(lanes[0]!, lanes[1]!, prefix);
}

/**
 * {@link hashString} as two 32-bit numbers (high, low), left in a shared pair read at once:
 * a column of them keeps a hash per message without a string per message (issue 47).
 */
export function hashLanes(text: string, seed = 0): Readonly<Uint32Array> {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  lanes[0] = h2;
  lanes[1] = h1;
  return lanes;
}

/**
 * {@link hashLanes} fed a piece of text at a time: the same lanes as one call on the pieces
 * joined, so a long text (a message's JSON of megabytes) is hashed across turns of the loop.
 * {@link digest} leaves the state as it was: more text may follow (the content key hashes the
 * JSON, then `meta`).
 */
export class LaneHasher {
  #h1: number;
  #h2: number;

  constructor(seed = 0) {
    this.#h1 = 0xdeadbeef ^ seed;
    this.#h2 = 0x41c6ce57 ^ seed;
  }

  /** Feeds `text`. */
  update(text: string): void {
    let h1 = this.#h1;
    let h2 = this.#h2;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    this.#h1 = h1;
    this.#h2 = h2;
  }

  /** The lanes of the text fed so far, in the pair {@link hashLanes} shares. */
  digest(): Readonly<Uint32Array> {
    let h1 = this.#h1;
    let h2 = this.#h2;
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    lanes[0] = h2;
    lanes[1] = h1;
    return lanes;
  }
}

/** The string {@link hashString} gives for the lanes `high` and `low` (after `prefix`, in the same flat string). */
export function lanesString(high: number, low: number, prefix = ''): string {
  return base36Pair(high >>> 0, low >>> 0, prefix);
}

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
const hashChars: number[] = [];

/**
 * `high.toString(36) + low.toString(36).padStart(7, '0')` as one flat string: the
 * concatenation made a cons string of two parts (three objects, kept alive as the identity of
 * every message of a history, each copied by every scavenge: issue 47).
 */
function base36Pair(high: number, low: number, prefix: string): string {
  const start = prefix.length;
  let length = start + 1;
  for (let v = Math.floor(high / 36); v > 0; v = Math.floor(v / 36)) length++;
  hashChars.length = length + 7;
  for (let i = 0; i < start; i++) hashChars[i] = prefix.charCodeAt(i);
  for (let i = length - 1, v = high; i >= start; i--, v = Math.floor(v / 36))
    hashChars[i] = DIGITS.charCodeAt(v % 36);
  for (let i = length + 6, v = low; i >= length; i--, v = Math.floor(v / 36))
    hashChars[i] = DIGITS.charCodeAt(v % 36);
  return String.fromCharCode.apply(null, hashChars);
}
