/**
 * Request bodies read from what is new. A stateless client resends its whole history every
 * call, so a body is the last one's bytes with a message or two more. Decoding and parsing a
 * 128k-token body costs milliseconds (its string alone is fresh memory, page-faulted in on
 * every call); comparing it with the last body's bytes costs microseconds. So each
 * conversation's last body is kept with its parsed fields and their byte offsets
 * (core/json/json-layout.ts). A new body is read field by field: a field whose bytes are a kept body's
 * takes its value, any other is parsed alone (a changed `model`, `stream` or `max_tokens` in
 * front of the conversation costs the parse of that field, not of the body); its conversation
 * is compared with the kept conversations from its own `[` (the offsets before it may have
 * moved) and takes the messages a kept one repeats (the very same objects, which also puts
 * the manager on its warm path), parsing only the rest. What is taken is exactly what
 * `JSON.parse` of the whole body gives: the bytes are equal, every other piece is parsed by
 * `JSON.parse`, and the structure between them is checked; anything else is parsed whole.
 */
import { randomUUID } from 'node:crypto';
import {
  type ArrayLayout,
  endsValue,
  type Field,
  type FieldsSoFar,
  firstDifference,
  readFields,
  scanElements,
  skipSpace,
  skipValue,
  topLevelArray,
} from '../../core/json/json-layout.js';
import { parseJsonInSlices } from '../../core/json/parse-json-in-slices.js';
import type { ProxyRoute } from '../proxy-routes.js';

type Json = Record<string, unknown>;

/** One request body, parsed. */
export interface ParsedRequest {
  /** The client's bytes. */
  bytes: Buffer;
  body: Json;
  /** Where the conversation sits in `bytes` (when it is an array found once at the top level). */
  layout: ArrayLayout | undefined;
  /** Messages taken from an earlier body instead of parsed (0: the whole body was parsed). */
  reused: number;
  /** The earlier body they were taken from. */
  from: RememberedBody | undefined;
}

/** A conversation's last body, kept to read its next one. */
export interface RememberedBody {
  readonly path: string;
  readonly bytes: Buffer;
  readonly body: Json;
  readonly layout: ArrayLayout;
  /** The session's fingerprint, and the messages it depends on (the first `fingerprintSpan`). */
  readonly fingerprint: string | undefined;
  readonly fingerprintSpan: number;
}

/** The client bytes kept across all conversations, by default. */
export const DEFAULT_REUSE_BYTES = 64 * 1024 * 1024;
/**
 * A body at least this long that no kept body helps to read is parsed across turns of the
 * event loop (core/json/parse-json-in-slices.ts); a shorter one at once. 1 MB of large
 * messages parses in a few milliseconds, but 700 KB of 20k tiny ones (`"hi 1"`) took 10-16 ms
 * with its layout's scan on a loaded machine.
 */
export const SLICED_PARSE_BYTES = 256 * 1024;
/** Bytes compared at one spot before a kept body is compared whole. */
const PROBE_BYTES = 256;

/** The number of offsets in the ascending `ends` at or before `offset`. */
function endsUpTo(ends: readonly number[], offset: number): number {
  let low = 0;
  let high = ends.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (ends[middle]! <= offset) low = middle + 1;
    else high = middle;
  }
  return low;
}

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** The value of the field `name` at `from` in `bytes`: a hint's when its bytes are the same, else parsed. */
function valueAt(bytes: Buffer, from: number, name: string, hints: readonly (RememberedBody | undefined)[]) {
  for (const hint of hints) {
    const field = hint?.layout.fields.find((f) => f.name === name);
    if (field === undefined) continue;
    const to = from + field.to - field.from;
    if (
      to <= bytes.length &&
      hint!.bytes.compare(bytes, from, to, field.from, field.to) === 0 &&
      endsValue(bytes, to)
    )
      return { value: hint!.body[name], to };
  }
  const to = skipValue(bytes, from);
  if (to <= from) return undefined;
  return { value: JSON.parse(bytes.toString('utf8', from, to)) as unknown, to };
}

/** Whether `kept`'s bytes before the end of its middle message are `bytes`' (its conversation at `start`). */
function probed(kept: RememberedBody, bytes: Buffer, start: number): boolean {
  const { ends, start: keptStart } = kept.layout;
  const shift = start - keptStart;
  const probe = ends[ends.length >> 1]!;
  const probeFrom = Math.max(keptStart, probe - PROBE_BYTES);
  return (
    bytes.length > probe + shift &&
    kept.bytes.compare(bytes, probeFrom + shift, probe + shift, probeFrom, probe) === 0
  );
}

/** How many of `kept`'s messages the conversation at `start` of `bytes` repeats byte for byte. */
function repeated(kept: RememberedBody, bytes: Buffer, start: number): number {
  const { ends, start: keptStart, end: keptEnd } = kept.layout;
  const same = firstDifference(kept.bytes.subarray(keptStart, keptEnd), bytes.subarray(start));
  return endsUpTo(ends, keptStart + same);
}

/** Parsed bodies and the last body of each conversation (see the file's comment). */
export class ParsedBodies {
  readonly #maxBytes: number;
  readonly #bySession = new Map<string, RememberedBody>();
  /** The body kept last, by path: its fields are the likeliest to repeat. */
  readonly #latest = new Map<string, RememberedBody>();
  #bytes = 0;
  readonly #marker = JSON.stringify(`\u0000${randomUUID()}`);
  readonly #markerValue = JSON.parse(this.#marker) as string;

  constructor(maxBytes = DEFAULT_REUSE_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** The body parsed, or `undefined` when it is not a JSON object. */
  parse(route: ProxyRoute, bytes: Buffer): ParsedRequest | undefined {
    let parsed: ParsedRequest | undefined;
    try {
      parsed = this.#fromKept(route, bytes);
    } catch {
      parsed = undefined;
    }
    return parsed ?? this.#parseWhole(route, bytes);
  }

  /**
   * {@link parse}, but a body of {@link SLICED_PARSE_BYTES} or more that is parsed whole is
   * parsed across turns of the event loop (the same value and layout).
   */
  async parseInSlices(route: ProxyRoute, bytes: Buffer): Promise<ParsedRequest | undefined> {
    if (bytes.length < SLICED_PARSE_BYTES) return this.parse(route, bytes);
    let parsed: ParsedRequest | undefined;
    try {
      parsed = this.#fromKept(route, bytes);
    } catch {
      parsed = undefined;
    }
    if (parsed !== undefined) return parsed;
    const layoutOf = this.#maxBytes > 0 ? route.messagesKey : undefined;
    let read: Awaited<ReturnType<typeof parseJsonInSlices>>;
    try {
      read = await parseJsonInSlices(bytes, { layoutOf });
    } catch {
      return undefined;
    }
    if (!isObject(read.value)) return undefined;
    return { bytes, body: read.value, layout: read.layout, reused: 0, from: undefined };
  }

  /** Whether `session`'s kept body is on `path` and starts with `prefix` (over the shorter of the two). */
  startsWith(session: string, path: string, prefix: Buffer): boolean {
    const kept = this.#bySession.get(session);
    if (kept === undefined || kept.path !== path) return false;
    const length = Math.min(prefix.length, kept.bytes.length);
    return kept.bytes.compare(prefix, 0, length, 0, length) === 0;
  }

  /** Keeps `parsed` as its session's last body. */
  remember(
    session: string,
    parsed: ParsedRequest,
    route: ProxyRoute,
    fingerprint?: { id: string; span: number },
  ) {
    const old = this.#bySession.get(session);
    if (old !== undefined) this.#forget(session, old);
    if (parsed.layout === undefined || parsed.bytes.length > this.#maxBytes) return;
    const kept: RememberedBody = {
      path: route.path,
      bytes: parsed.bytes,
      body: parsed.body,
      layout: parsed.layout,
      fingerprint: fingerprint?.id,
      fingerprintSpan: fingerprint?.span ?? Number.POSITIVE_INFINITY,
    };
    this.#bySession.set(session, kept);
    this.#latest.set(route.path, kept);
    this.#bytes += parsed.bytes.length;
    for (const [oldest, body] of this.#bySession) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#forget(oldest, body);
    }
  }

  #forget(session: string, kept: RememberedBody) {
    this.#bySession.delete(session);
    this.#bytes -= kept.bytes.length;
    if (this.#latest.get(kept.path) === kept) this.#latest.delete(kept.path);
  }

  #parseWhole(route: ProxyRoute, bytes: Buffer): ParsedRequest | undefined {
    let body: unknown;
    try {
      body = JSON.parse(bytes.toString('utf8'));
    } catch {
      return undefined;
    }
    if (!isObject(body)) return undefined;
    const messages = body[route.messagesKey];
    let layout: ArrayLayout | undefined;
    if (this.#maxBytes > 0 && Array.isArray(messages) && messages.length > 0) {
      layout = topLevelArray(bytes, route.messagesKey);
      if (layout !== undefined && layout.ends.length !== messages.length) layout = undefined;
    }
    return { bytes, body, layout, reused: 0, from: undefined };
  }

  /**
   * The kept body whose conversation this one's (at `start`) extends the most, and how many of
   * its messages it repeats. Each kept body is probed at one spot first (the end of its middle
   * message: another conversation differs there); the path's latest body is compared even when
   * its probe differs (a message edited before the middle of the client's last body).
   */
  #closest(route: ProxyRoute, bytes: Buffer, start: number, latest: RememberedBody) {
    let best: { kept: RememberedBody; count: number } | undefined;
    for (const kept of this.#bySession.values()) {
      if (kept.path !== route.path || !probed(kept, bytes, start)) continue;
      const count = repeated(kept, bytes, start);
      if (count > (best?.count ?? 0)) best = { kept, count };
      if (count === kept.layout.ends.length) return best;
    }
    if (best === undefined && this.#bySession.size > 0) {
      const count = repeated(latest, bytes, start);
      if (count > 0) best = { kept: latest, count };
    }
    return best;
  }

  /** The body read from what is new (see the file's comment), or `undefined` to parse it whole. */
  #fromKept(route: ProxyRoute, bytes: Buffer): ParsedRequest | undefined {
    const latest = this.#latest.get(route.path);
    if (latest === undefined) return undefined;
    const key = route.messagesKey;
    const open = skipSpace(bytes, 0);
    if (bytes[open] !== OPEN_BRACE) return undefined;
    const read: FieldsSoFar = { names: new Set(), fields: [], values: [] };
    const head = readFields(bytes, open + 1, true, key, read, (name, from) =>
      valueAt(bytes, from, name, [latest]),
    );
    if (head === undefined || head.closed || bytes[head.at] !== OPEN_BRACKET) return undefined;
    const start = head.at;
    const closest = this.#closest(route, bytes, start, latest);
    if (closest === undefined) return undefined;
    const { kept, count } = closest;
    const shift = start - kept.layout.start;
    // A copy, shifted when the fields before the conversation changed length: `new Array(n)`
    // of 300k is a dictionary-mode array, whose filling held the loop ~9 ms (issue 47).
    const ends = kept.layout.ends.slice(0, count);
    if (shift !== 0) for (let i = 0; i < count; i++) ends[i]! += shift;
    // The separator after the last message taken: the new messages follow it. Where the kept
    // body closed its array right after that message, this one may have spaces before its `,`.
    const separator = skipSpace(bytes, ends[count - 1]!);
    if (bytes[separator] !== COMMA && bytes[separator] !== CLOSE_BRACKET) return undefined;
    ends[count - 1] = separator;
    const end = scanElements(bytes, separator, ends);
    if (end < 0) return undefined;
    const added = JSON.parse(`[${this.#marker}${bytes.toString('utf8', separator, end + 1)}`) as unknown[];
    if (added[0] !== this.#markerValue || added.length - 1 !== ends.length - count) return undefined;
    const messages = (kept.body[key] as unknown[]).slice(0, count);
    for (let i = 1; i < added.length; i++) messages.push(added[i]);
    read.fields.push({ name: key, from: start, to: end + 1 });
    read.values.push(messages);
    const tail = readFields(bytes, end + 1, false, undefined, read, (name, from) =>
      valueAt(bytes, from, name, [kept, latest]),
    );
    if (tail === undefined || skipSpace(bytes, tail.at) !== bytes.length) return undefined;
    return {
      bytes,
      body: bodyOf(read.fields, read.values),
      layout: { start, ends, end, fields: read.fields },
      reused: count,
      from: kept,
    };
  }
}

/** An object of the fields in the order read (as `JSON.parse` makes it). */
function bodyOf(fields: readonly Field[], values: readonly unknown[]): Json {
  const body: Json = {};
  for (let i = 0; i < fields.length; i++) body[fields[i]!.name] = values[i];
  return body;
}
