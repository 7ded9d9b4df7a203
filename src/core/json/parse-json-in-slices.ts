/**
 * `JSON.parse` of a large document across turns of the event loop. Native `JSON.parse` cannot
 * be paused, and a 20 MB request body takes tens of milliseconds in one piece; so the document's
 * structure is read with json-layout.ts's scanner (strings, brackets, separators) and its values
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
import { TimeSlice } from '../time-slice.js';
import {
  type ArrayLayout,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  type Field,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  skipSpace,
  skipString,
  skipValue,
  TOO_LONG,
} from './json-layout.js';

/** Bytes of values handed to one `JSON.parse` (a batch: well under a millisecond). */
export const BATCH_BYTES = 64 * 1024;
/** An array or object over this many bytes is read element by element rather than parsed at once. */
export const LARGE_BYTES = 256 * 1024;
/** Levels of large containers read element by element; deeper ones are parsed whole. */
const MAX_DEPTH = 32;

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

/**
 * The elements (or members) of one array (or object) not parsed yet: the bytes from `from` to
 * `to`, `count` values with their separators, handed to `parse` together.
 */
class Batch {
  private from = 0;
  private to = 0;
  private count = 0;

  constructor(
    private readonly walk: Walk,
    /** The container's closing byte: `]` or `}`. */
    private readonly close: number,
    private readonly parse: (from: number, to: number, count: number) => void,
  ) {}

  /** Adds the value (or member) whose bytes run from `from` to `to`. */
  add(from: number, to: number) {
    if (this.count === 0) this.from = from;
    this.to = to;
    this.count++;
  }

  flush() {
    if (this.count === 0) return;
    this.parse(this.from, this.to, this.count);
    this.count = 0;
  }

  /**
   * The offset of the separator after the value ending at `at`, checked to be a `,` or the
   * closing byte (pushed onto `ends` when given); at the closing byte the batch is parsed,
   * else it is parsed when it holds {@link Walk.batchBytes}.
   */
  separator(at: number, ends: number[] | undefined): number {
    const separator = skipSpace(this.walk.bytes, at);
    const byte = this.walk.bytes[separator];
    if (byte !== COMMA && byte !== this.close) fail(separator);
    ends?.push(separator);
    if (byte === this.close || this.to - this.from >= this.walk.batchBytes) this.flush();
    return separator;
  }

  /** Whether to give the loop a turn now: nothing waits to be parsed and the slice has run its time. */
  due(): boolean {
    return this.count === 0 && this.walk.slice.due();
  }
}

/** The value at `at` and the offset after it. */
async function parseValue(walk: Walk, at: number, depth: number): Promise<{ value: unknown; to: number }> {
  const to = skipValue(walk.bytes, at, limitAt(walk, depth));
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
  const batch = new Batch(walk, CLOSE_BRACKET, (from, to, count) => {
    const items = JSON.parse(`[${bytes.toString('utf8', from, to)}]`) as unknown[];
    if (items.length !== count) fail(from);
    for (const item of items) out.push(item);
  });
  for (;;) {
    const to = skipValue(bytes, i, limitAt(walk, depth));
    if (to === TOO_LONG) {
      batch.flush();
      const large = await parseValue(walk, i, depth);
      out.push(large.value);
      i = large.to;
    } else {
      if (to <= i) fail(i);
      batch.add(i, to);
      i = to;
    }
    const separator = batch.separator(i, ends);
    if (bytes[separator] === CLOSE_BRACKET) return { value: out, to: separator + 1 };
    if (batch.due()) await slice.pause();
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
  const batch = new Batch(walk, CLOSE_BRACE, (from, to) => {
    const members = JSON.parse(`{${bytes.toString('utf8', from, to)}}`) as Record<string, unknown>;
    for (const key of Object.keys(members)) setMember(out, key, members[key]);
  });
  for (;;) {
    if (bytes[i] !== QUOTE) fail(i);
    const keyTo = skipString(bytes, i);
    if (keyTo < 0) fail(i);
    const colon = skipSpace(bytes, keyTo);
    if (bytes[colon] !== COLON) fail(colon);
    const from = skipSpace(bytes, colon + 1);
    const to = skipValue(bytes, from, limitAt(walk, depth));
    if (to === TOO_LONG || read !== undefined) {
      batch.flush();
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
      batch.add(i, to);
      i = to;
    }
    const separator = batch.separator(i, undefined);
    if (bytes[separator] === CLOSE_BRACE) return { value: out, to: separator + 1 };
    if (batch.due()) await slice.pause();
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
