/**
 * `JSON.parse` of a large document across turns of the event loop. Native `JSON.parse` cannot
 * be paused, and a 20 MB request body takes tens of milliseconds in one piece; so the document's
 * structure is read here (strings, brackets, separators, as json-layout.ts does) and its values
 * are handed to `JSON.parse` a batch at a time: the elements of an array or the members of an
 * object whose bytes together fill about {@link BATCH_BYTES}, the loop given a turn between
 * batches once the slice has run its time. A value larger than {@link LARGE_BYTES} that is an
 * array or an object is read the same way, one level down.
 *
 * The result is `JSON.parse`'s: every value is parsed by `JSON.parse` from its own bytes, the
 * bytes between values are checked to be JSON's separators (`,` `:` and spaces), members are
 * set in the order written (a repeated key keeps its first place and its last value, as
 * `JSON.parse` does; `__proto__` becomes an own property). Where the bytes are not JSON, the
 * structure read or a batch fails, and a {@link SyntaxError} is thrown (its message is not
 * `JSON.parse`'s: a caller that shows it parses the whole text again for the exact message).
 */
import { TimeSlice } from '../core/time-slice.js';
import { type ArrayLayout, type Field, skipSpace, skipString, skipValue } from './json-layout.js';

/** Bytes of values handed to one `JSON.parse` (a batch: well under a millisecond). */
export const BATCH_BYTES = 64 * 1024;
/** An array or object over this many bytes is read element by element rather than parsed at once. */
export const LARGE_BYTES = 256 * 1024;
/** Levels of large containers read element by element; deeper ones are parsed whole. */
const MAX_DEPTH = 32;

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** {@link skipWithin}'s answer for a container longer than its limit. */
const TOO_LONG = -2;

/** What {@link parseJsonInSlices} gives. */
export interface SlicedParse {
  value: unknown;
  /**
   * Where the array under the top-level key `layoutOf` sits (when asked, the document is an
   * object holding one such non-empty array, and names no key twice nor `__proto__`).
   */
  layout: ArrayLayout | undefined;
}

/** Options of {@link parseJsonInSlices}. */
export interface ParseInSlicesOptions {
  /** The top-level key whose array's layout to give. */
  layoutOf?: string | undefined;
  /** The clock shared with the work around the parse. @default a new TimeSlice */
  slice?: TimeSlice | undefined;
  /** @default BATCH_BYTES */
  batchBytes?: number;
  /** @default LARGE_BYTES */
  largeBytes?: number;
}

interface Walk {
  readonly bytes: Buffer;
  readonly slice: TimeSlice;
  readonly batchBytes: number;
  readonly largeBytes: number;
}

const fail = (at: number): never => {
  throw new SyntaxError(`not valid JSON at byte ${at}`);
};

/** The offset after the value at `at`, or {@link TOO_LONG} for an array or object longer than `limit` bytes. */
function skipWithin(bytes: Buffer, at: number, limit: number): number {
  const first = bytes[at];
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) return skipValue(bytes, at);
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

/** How far a container is scanned before it is read element by element. */
const limitAt = (walk: Walk, depth: number) =>
  depth >= MAX_DEPTH ? Number.POSITIVE_INFINITY : walk.largeBytes;

const parseText = (bytes: Buffer, from: number, to: number): unknown =>
  JSON.parse(bytes.toString('utf8', from, to));

/** Sets `key` on `object` as `JSON.parse` does (an own data property, `__proto__` included). */
function setMember(object: Record<string, unknown>, key: string, value: unknown) {
  if (key === '__proto__')
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

/** The value at `at` and the offset after it. */
async function parseValue(walk: Walk, at: number, depth: number): Promise<{ value: unknown; to: number }> {
  const to = skipWithin(walk.bytes, at, limitAt(walk, depth));
  if (to === TOO_LONG) {
    return walk.bytes[at] === OPEN_BRACKET
      ? parseArray(walk, at, depth + 1, undefined)
      : parseObject(walk, at, depth + 1, undefined, undefined);
  }
  if (to <= at) fail(at);
  return { value: parseText(walk.bytes, at, to), to };
}

/**
 * The array opening at `at` (a `[`) and the offset after its `]`, its elements parsed in
 * batches; `ends` (when given) receives the offset of the separator after each element.
 */
async function parseArray(
  walk: Walk,
  at: number,
  depth: number,
  ends: number[] | undefined,
): Promise<{ value: unknown[]; to: number }> {
  const { bytes, slice } = walk;
  const out: unknown[] = [];
  let i = skipSpace(bytes, at + 1);
  if (bytes[i] === CLOSE_BRACKET) return { value: out, to: i + 1 };
  // The batch: elements from `batchFrom` to `batchTo`, `batchCount` of them, not parsed yet.
  let batchFrom = i;
  let batchTo = i;
  let batchCount = 0;
  const flush = () => {
    if (batchCount === 0) return;
    const batch = JSON.parse(`[${bytes.toString('utf8', batchFrom, batchTo)}]`) as unknown[];
    if (batch.length !== batchCount) fail(batchFrom);
    for (const item of batch) out.push(item);
    batchCount = 0;
  };
  for (;;) {
    const to = skipWithin(bytes, i, limitAt(walk, depth));
    if (to === TOO_LONG) {
      flush();
      const large = await parseValue(walk, i, depth);
      out.push(large.value);
      i = large.to;
    } else {
      if (to <= i) fail(i);
      if (batchCount === 0) batchFrom = i;
      batchTo = to;
      batchCount++;
      i = to;
    }
    const separator = skipSpace(bytes, i);
    const byte = bytes[separator];
    if (byte !== COMMA && byte !== CLOSE_BRACKET) fail(separator);
    ends?.push(separator);
    if (byte === CLOSE_BRACKET) {
      flush();
      return { value: out, to: separator + 1 };
    }
    if (batchTo - batchFrom >= walk.batchBytes) flush();
    if (batchCount === 0 && slice.due()) await slice.pause();
    i = skipSpace(bytes, separator + 1);
  }
}

/** The top-level fields read, to give the layout of one of them. */
interface FieldsRead {
  fields: Field[];
  names: Set<string>;
  /** A key seen twice, or `__proto__`: no layout. */
  ambiguous: boolean;
  array: { start: number; ends: number[]; end: number } | undefined;
}

/**
 * The object opening at `at` (a `{`) and the offset after its `}`, its members parsed in
 * batches; with `read`, each member alone and its field recorded (the top level), the member
 * `layoutOf` read with its elements' ends.
 */
async function parseObject(
  walk: Walk,
  at: number,
  depth: number,
  read: FieldsRead | undefined,
  layoutOf: string | undefined,
): Promise<{ value: Record<string, unknown>; to: number }> {
  const { bytes, slice } = walk;
  const out: Record<string, unknown> = {};
  let i = skipSpace(bytes, at + 1);
  if (bytes[i] === CLOSE_BRACE) return { value: out, to: i + 1 };
  let batchFrom = i;
  let batchTo = i;
  let batchCount = 0;
  const flush = () => {
    if (batchCount === 0) return;
    const batch = JSON.parse(`{${bytes.toString('utf8', batchFrom, batchTo)}}`) as Record<string, unknown>;
    for (const key of Object.keys(batch)) setMember(out, key, batch[key]);
    batchCount = 0;
  };
  for (;;) {
    if (bytes[i] !== QUOTE) fail(i);
    const keyTo = skipString(bytes, i);
    if (keyTo < 0) fail(i);
    const colon = skipSpace(bytes, keyTo);
    if (bytes[colon] !== COLON) fail(colon);
    const from = skipSpace(bytes, colon + 1);
    const to = skipWithin(bytes, from, limitAt(walk, depth));
    if (to === TOO_LONG || read !== undefined) {
      flush();
      const name = parseText(bytes, i, keyTo) as string;
      const value =
        read !== undefined && name === layoutOf && bytes[from] === OPEN_BRACKET
          ? await readArrayField(walk, from, depth, read)
          : to === TOO_LONG
            ? await parseValue(walk, from, depth)
            : { value: parseText(bytes, from, to), to };
      if (read !== undefined) noteField(read, name, from, value.to);
      setMember(out, name, value.value);
      i = value.to;
    } else {
      if (to <= from) fail(from);
      if (batchCount === 0) batchFrom = i;
      batchTo = to;
      batchCount++;
      i = to;
    }
    const separator = skipSpace(bytes, i);
    const byte = bytes[separator];
    if (byte !== COMMA && byte !== CLOSE_BRACE) fail(separator);
    if (byte === CLOSE_BRACE) {
      flush();
      return { value: out, to: separator + 1 };
    }
    if (batchTo - batchFrom >= walk.batchBytes) flush();
    if (batchCount === 0 && slice.due()) await slice.pause();
    i = skipSpace(bytes, separator + 1);
  }
}

async function readArrayField(walk: Walk, from: number, depth: number, read: FieldsRead) {
  const ends: number[] = [];
  const parsed = await parseArray(walk, from, depth + 1, ends);
  read.array = { start: from, ends, end: parsed.to - 1 };
  return parsed;
}

function noteField(read: FieldsRead, name: string, from: number, to: number) {
  if (read.names.has(name) || name === '__proto__') read.ambiguous = true;
  read.names.add(name);
  read.fields.push({ name, from, to });
}

/**
 * `JSON.parse(bytes.toString('utf8'))`, giving the event loop a turn between batches (see the
 * file's comment); with `layoutOf`, also where that top-level array sits. Throws a
 * {@link SyntaxError} where the bytes are not JSON.
 */
export async function parseJsonInSlices(
  bytes: Buffer,
  options: ParseInSlicesOptions = {},
): Promise<SlicedParse> {
  const walk: Walk = {
    bytes,
    slice: options.slice ?? new TimeSlice(),
    batchBytes: options.batchBytes ?? BATCH_BYTES,
    largeBytes: options.largeBytes ?? LARGE_BYTES,
  };
  const start = skipSpace(bytes, 0);
  const read: FieldsRead | undefined =
    options.layoutOf !== undefined && bytes[start] === OPEN_BRACE
      ? { fields: [], names: new Set(), ambiguous: false, array: undefined }
      : undefined;
  let parsed: { value: unknown; to: number };
  if (read !== undefined) parsed = await parseObject(walk, start, 0, read, options.layoutOf);
  else if (bytes[start] === OPEN_BRACKET) parsed = await parseArray(walk, start, 0, undefined);
  else if (bytes[start] === OPEN_BRACE) parsed = await parseObject(walk, start, 0, undefined, undefined);
  else parsed = { value: parseText(bytes, 0, bytes.length), to: bytes.length };
  if (skipSpace(bytes, parsed.to) !== bytes.length) fail(parsed.to);
  const array = read?.ambiguous === false ? read.array : undefined;
  const layout =
    array !== undefined && array.ends.length > 0 ? { ...array, fields: read!.fields } : undefined;
  return { value: parsed.value, layout };
}
