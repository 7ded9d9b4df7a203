/**
 * Where a request body's conversation sits in its bytes: the offset of the array's `[` and of
 * the separator (`,` or the closing `]`) after each element. The proxy reads a body that
 * extends the last one (a client resending its whole history) by comparing bytes and parsing
 * only what is new, and writes a compacted body by splicing the client's own bytes around what
 * changed: both need these offsets. The scanner reads structure only (strings, brackets,
 * separators); it is run on bytes that `JSON.parse` accepted, or its reading is checked by
 * `JSON.parse` before it is trusted.
 */

/** JSON's structural bytes. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/** The conversation array of one body. */
export interface ArrayLayout {
  /** Offset of the array's `[`. */
  start: number;
  /** Offset of the separator after each element: a `,`, and for the last one the closing `]`. */
  ends: number[];
  /** Offset of the closing `]`. */
  end: number;
  /** The body's top-level fields in the order written, the array's included (its span is `start` to `end + 1`). */
  fields: Field[];
}

/** One top-level field of a body: its name and where its value's bytes are. */
export interface Field {
  name: string;
  /** Offset of the value's first byte. */
  from: number;
  /** Offset just after the value's last byte. */
  to: number;
}

const isSpace = (byte: number | undefined) =>
  byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

export function skipSpace(bytes: Uint8Array, at: number): number {
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

/** {@link skipValue}'s answer for an array or object longer than its `limit`. */
export const TOO_LONG = -2;

/**
 * The offset after the value starting at `at`, or -1 when it does not end; an array or object
 * not closed within `limit` bytes of `at` gives {@link TOO_LONG} instead.
 */
export function skipValue(bytes: Buffer, at: number, limit = Number.POSITIVE_INFINITY): number {
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
  const stop = Math.min(bytes.length, at + limit);
  let depth = 0;
  for (let i = at; i < stop; i++) {
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
  return stop === bytes.length ? -1 : TOO_LONG;
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

/**
 * The layout of the array under the top-level `key` of a body that `JSON.parse` accepted, or
 * `undefined` when the body is not an object holding one such array, or names a key twice
 * (the parser keeps the last value, and these offsets would not say which) or `__proto__`.
 */
export function topLevelArray(bytes: Buffer, key: string): ArrayLayout | undefined {
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== OPEN_BRACE) return undefined;
  i = skipSpace(bytes, i + 1);
  const fields: Field[] = [];
  const names = new Set<string>();
  let found: Omit<ArrayLayout, 'fields'> | undefined;
  while (bytes[i] === QUOTE) {
    const keyEnd = skipString(bytes, i);
    if (keyEnd < 0) return undefined;
    const name = JSON.parse(bytes.toString('utf8', i, keyEnd)) as string;
    if (names.has(name) || name === '__proto__') return undefined;
    names.add(name);
    i = skipSpace(bytes, keyEnd);
    if (bytes[i] !== COLON) return undefined;
    const value = skipSpace(bytes, i + 1);
    if (name === key) {
      if (bytes[value] !== OPEN_BRACKET) return undefined;
      const ends: number[] = [];
      const end = scanElements(bytes, value + 1, ends);
      if (end < 0) return undefined;
      found = { start: value, ends, end };
      i = end + 1;
    } else {
      i = skipValue(bytes, value);
      if (i < 0) return undefined;
    }
    fields.push({ name, from: value, to: i });
    i = skipSpace(bytes, i);
    if (bytes[i] !== COMMA) break;
    i = skipSpace(bytes, i + 1);
  }
  return found === undefined ? undefined : { ...found, fields };
}

/** Top-level fields read so far, in the order written (`values[i]` is `fields[i]`'s). */
export interface FieldsSoFar {
  names: Set<string>;
  fields: Field[];
  values: unknown[];
}

/** A value read at `from`: the value and the offset after it (`undefined`: not JSON). */
export type ReadValue = (name: string, from: number) => { value: unknown; to: number } | undefined;

/**
 * Reads a body's top-level `"name": value` pairs from `at` (just after the `{` when `first`,
 * else just after a value) into `into`, each value with `read`, until the pair named `stop`
 * (returns the offset of its value, not read) or the object's `}` (returns the offset after
 * it, `closed`). `undefined` when the bytes are not JSON there, or name a key twice or
 * `__proto__` (which a parse does not make a field of its own).
 */
export function readFields(
  bytes: Buffer,
  at: number,
  first: boolean,
  stop: string | undefined,
  into: FieldsSoFar,
  read: ReadValue,
): { at: number; closed: boolean } | undefined {
  let i = skipSpace(bytes, at);
  if (bytes[i] === CLOSE_BRACE) return { at: i + 1, closed: true };
  if (!first) {
    if (bytes[i] !== COMMA) return undefined;
    i = skipSpace(bytes, i + 1);
  }
  for (;;) {
    if (bytes[i] !== QUOTE) return undefined;
    const keyEnd = skipString(bytes, i);
    if (keyEnd < 0) return undefined;
    const name = JSON.parse(bytes.toString('utf8', i, keyEnd)) as string;
    if (into.names.has(name) || name === '__proto__') return undefined;
    into.names.add(name);
    i = skipSpace(bytes, keyEnd);
    if (bytes[i] !== COLON) return undefined;
    const from = skipSpace(bytes, i + 1);
    if (name === stop) return { at: from, closed: false };
    const value = read(name, from);
    if (value === undefined) return undefined;
    into.fields.push({ name, from, to: value.to });
    into.values.push(value.value);
    i = skipSpace(bytes, value.to);
    if (bytes[i] === CLOSE_BRACE) return { at: i + 1, closed: true };
    if (bytes[i] !== COMMA) return undefined;
    i = skipSpace(bytes, i + 1);
  }
}

/** Whether the byte at `at`, spaces skipped, ends a top-level value (`,` or `}`). */
export function endsValue(bytes: Buffer, at: number): boolean {
  const next = bytes[skipSpace(bytes, at)];
  return next === COMMA || next === CLOSE_BRACE;
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
