/**
 * Where a request body's conversation sits in its bytes: the offset of the array's `[` and of
 * the separator (`,` or the closing `]`) after each element. The proxy reads a body that
 * extends the last one (a client resending its whole history) by comparing bytes and parsing
 * only what is new, and writes a compacted body by splicing the client's own bytes around what
 * changed: both need these offsets. The scanner reads structure only (strings, brackets,
 * separators); it is run on bytes that `JSON.parse` accepted, or its reading is checked by
 * `JSON.parse` before it is trusted.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** The conversation array of one body. */
export interface ArrayLayout {
  /** Offset of the array's `[`. */
  start: number;
  /** Offset of the separator after each element: a `,`, and for the last one the closing `]`. */
  ends: number[];
  /** Offset of the closing `]`. */
  end: number;
  /** The body's top-level keys before the array's, in the order written. */
  keysBefore: string[];
}

const isSpace = (byte: number | undefined) =>
  byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

function skipSpace(bytes: Uint8Array, at: number): number {
  let i = at;
  while (isSpace(bytes[i])) i++;
  return i;
}

/** The offset after the string opening at `at` (a `"`), or -1 when it does not end. */
export function skipString(bytes: Buffer, at: number): number {
  let from = at + 1;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, from);
    if (quote < 0) return -1;
    let slashes = 0;
    while (bytes[quote - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The offset after the value starting at `at`, or -1 when it does not end. */
function skipValue(bytes: Buffer, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return skipString(bytes, at);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    let i = at;
    while (i < bytes.length) {
      const byte = bytes[i]!;
      if (byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || isSpace(byte)) break;
      i++;
    }
    return i;
  }
  let depth = 0;
  for (let i = at; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      i = skipString(bytes, i) - 1;
      if (i < 0) return -1;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * Scans array elements from `at` (just after the `[`, or at the separator after an element),
 * pushing the offset of the separator after each element onto `ends`. Returns the offset of the
 * array's closing `]`, or -1 when the bytes end first or are not JSON.
 */
export function scanElements(bytes: Buffer, at: number, ends: number[]): number {
  let depth = 0;
  // Whether an element began since the last separator (`[]` and `[...,]` push nothing more).
  let open = false;
  let from = skipSpace(bytes, at);
  if (bytes[from] === COMMA) from++;
  for (let i = from; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      open = true;
      i = skipString(bytes, i) - 1;
      if (i < 0) return -1;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      open = true;
      depth++;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      if (depth > 0) depth--;
      else if (byte === CLOSE_BRACE) return -1;
      else {
        if (open) ends.push(i);
        return i;
      }
    } else if (byte === COMMA && depth === 0) {
      if (!open) return -1;
      ends.push(i);
      open = false;
    } else if (!isSpace(byte)) open = true;
  }
  return -1;
}

/** The name of the key whose string spans `from` to `to` (quotes included). */
function keyName(bytes: Buffer, from: number, to: number): string {
  const raw = bytes.toString('utf8', from + 1, to - 1);
  return raw.includes('\\') ? (JSON.parse(bytes.toString('utf8', from, to)) as string) : raw;
}

/**
 * The layout of the array under the top-level `key` of a body that `JSON.parse` accepted, or
 * `undefined` when the body is not an object holding one such array (or holds `key` twice,
 * where the parser keeps the last and these offsets would not say which).
 */
export function topLevelArray(bytes: Buffer, key: string): ArrayLayout | undefined {
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== OPEN_BRACE) return undefined;
  i = skipSpace(bytes, i + 1);
  const keysBefore: string[] = [];
  let found: ArrayLayout | undefined;
  while (bytes[i] === QUOTE) {
    const keyEnd = skipString(bytes, i);
    if (keyEnd < 0) return undefined;
    const name = keyName(bytes, i, keyEnd);
    i = skipSpace(bytes, keyEnd);
    if (bytes[i] !== COLON) return undefined;
    const value = skipSpace(bytes, i + 1);
    if (name === key) {
      if (found !== undefined || bytes[value] !== OPEN_BRACKET) return undefined;
      const ends: number[] = [];
      const end = scanElements(bytes, value + 1, ends);
      if (end < 0) return undefined;
      found = { start: value, ends, end, keysBefore: [...keysBefore] };
      i = end + 1;
    } else {
      keysBefore.push(name);
      i = skipValue(bytes, value);
      if (i < 0) return undefined;
    }
    i = skipSpace(bytes, i);
    if (bytes[i] !== COMMA) break;
    i = skipSpace(bytes, i + 1);
  }
  return found;
}

/** Bytes compared per step when looking for where two bodies part. */
const FIRST_STEP = 4096;

/**
 * The offset of the first byte where `a` and `b` differ, looking no further than `limit` (which
 * it returns when they agree that far, or the shorter length when one is the other's start).
 */
export function firstDifference(a: Buffer, b: Buffer, limit = Number.POSITIVE_INFINITY): number {
  const length = Math.min(a.length, b.length, limit);
  let from = 0;
  let step = FIRST_STEP;
  // Whole windows while they match, growing; then halve the window that differs.
  while (from < length) {
    const to = Math.min(length, from + step);
    if (a.compare(b, from, to, from, to) !== 0) {
      let low = from;
      let high = to;
      while (high - low > 1) {
        const middle = (low + high) >>> 1;
        if (a.compare(b, low, middle, low, middle) === 0) low = middle;
        else high = middle;
      }
      return low;
    }
    from = to;
    step *= 2;
  }
  return length;
}
