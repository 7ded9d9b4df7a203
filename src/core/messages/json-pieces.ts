/**
 * A message's JSON (as `JSON.stringify` writes it, top-level `meta` left out) as a sequence of
 * pieces whose concatenation is that text, its long strings written a chunk at a time: a
 * message of megabytes is hashed across turns of the loop instead of stringified and hashed in
 * one stretch (a 10 MB tool result held the loop ~140 ms).
 */

/** Strings at least this long are written in chunks; a message without one is stringified whole. */
export const LONG_STRING = 64 * 1024;
/** Characters of a long string per piece (~1 ms to escape and hash). */
const CHUNK = 64 * 1024;
/** Deeper than this, the message is stringified whole (which reports a cycle or runaway nesting). */
const MAX_DEPTH = 64;

/** Stands for each long string in the skeleton; its quoted form splits the skeleton's text. */
const PLACEHOLDER = '\u0000\u0001agent-compaction long string\u0001\u0000';
const QUOTED = JSON.stringify(PLACEHOLDER);

/** The JSON of a message with long strings: the skeleton's text around them, and the strings. */
export interface SplitJson {
  /** `longs.length + 1` pieces of text: before the first long string, between two, after the last. */
  readonly parts: readonly string[];
  readonly longs: readonly string[];
}

/**
 * The JSON text of `raw` (without its top-level `meta`) split around its long strings, or
 * `undefined` when it has none, or when anything in it is not plain JSON data (a `toJSON`, a
 * class instance, a cycle, deep nesting: those are stringified whole, as before, with the same
 * result or error).
 */
export function splitJson(raw: object): SplitJson | undefined {
  const longs: string[] = [];
  let skeleton: string;
  try {
    const copy = skeletonOf(raw, longs, 0, true);
    if (copy === BAIL || longs.length === 0) return undefined;
    skeleton = JSON.stringify(copy);
  } catch {
    return undefined;
  }
  const parts = skeleton.split(QUOTED);
  // A key or string of the caller's equal to the placeholder: stringified whole.
  return parts.length === longs.length + 1 ? { parts, longs } : undefined;
}

/** Values {@link hasLongString} looks at before giving up (a cycle of many branches is not walked forever). */
const MAX_NODES = 100_000;
let nodesLeft = 0;

/**
 * True when `value` holds a string of {@link LONG_STRING} characters or more (within
 * {@link splitJson}'s depth, and its first {@link MAX_NODES} values): a walk without
 * allocation, run on every new message of a cold call.
 */
export function hasLongString(value: unknown): boolean {
  nodesLeft = MAX_NODES;
  return holdsLong(value, 0);
}

function holdsLong(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return value.length >= LONG_STRING;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH || --nodesLeft < 0) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (holdsLong(value[i], depth + 1)) return true;
    return false;
  }
  for (const key in value)
    if (Object.hasOwn(value, key) && holdsLong((value as Record<string, unknown>)[key], depth + 1))
      return true;
  return false;
}

const BAIL = Symbol('bail');

function skeletonOf(value: unknown, longs: string[], depth: number, top: boolean): unknown {
  if (typeof value === 'string') {
    if (value.length < LONG_STRING) return value;
    longs.push(value);
    return PLACEHOLDER;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return BAIL;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = skeletonOf(value[i], longs, depth + 1, false);
      if (item === BAIL) return BAIL;
      out[i] = item;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return BAIL;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (top && key === 'meta') continue;
    const item = skeletonOf((value as Record<string, unknown>)[key], longs, depth + 1, false);
    if (item === BAIL) return BAIL;
    out[key] = item;
  }
  return out;
}

/** The pieces of `split`'s text, in order: their concatenation is the message's JSON. */
export function* jsonPieces(split: SplitJson): Generator<string, void, undefined> {
  const { parts, longs } = split;
  for (let k = 0; k < longs.length; k++) {
    yield parts[k]!;
    yield '"';
    const text = longs[k]!;
    for (let start = 0; start < text.length; ) {
      let end = Math.min(text.length, start + CHUNK);
      // A surrogate pair is never cut: each half alone would be escaped as a lone surrogate.
      if (end < text.length && isHigh(text.charCodeAt(end - 1)) && isLow(text.charCodeAt(end))) end++;
      yield JSON.stringify(text.slice(start, end)).slice(1, -1);
      start = end;
    }
    yield '"';
  }
  yield parts[longs.length]!;
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;
