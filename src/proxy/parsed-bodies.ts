/**
 * Request bodies read from what is new. A stateless client resends its whole history every
 * call, so a body is the last one's bytes with a message or two more. Decoding and parsing a
 * 128k-token body costs milliseconds (its string alone is fresh memory, page-faulted in on
 * every call); comparing it with the last body's bytes costs microseconds. So each
 * conversation's last body is kept with its parsed messages and their byte offsets
 * (json-layout.ts): a body whose bytes match one kept up to the end of some of its messages
 * takes those messages (the very same objects, which also puts the manager on its warm path)
 * and parses only the rest. What is taken is exactly what `JSON.parse` of the whole body gives:
 * the bytes are equal, and the rest is parsed behind a marker no client can guess, so a second
 * conversation key further on cannot go unseen.
 */
import { randomUUID } from 'node:crypto';
import { type ArrayLayout, firstDifference, scanElements, topLevelArray } from './json-layout.js';
import type { ProxyRoute } from './proxy-routes.js';

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

/** Parsed bodies and the last body of each conversation (see the file's comment). */
export class ParsedBodies {
  readonly #maxBytes: number;
  readonly #bySession = new Map<string, RememberedBody>();
  #bytes = 0;
  readonly #marker = JSON.stringify(`\u0000${randomUUID()}`);
  readonly #markerValue = JSON.parse(this.#marker) as string;

  constructor(maxBytes = DEFAULT_REUSE_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** The body parsed, or `undefined` when it is not a JSON object. */
  parse(route: ProxyRoute, bytes: Buffer): ParsedRequest | undefined {
    return this.#fromKept(route, bytes) ?? this.#parseWhole(route, bytes);
  }

  /** Keeps `parsed` as its session's last body. */
  remember(
    session: string,
    parsed: ParsedRequest,
    route: ProxyRoute,
    fingerprint?: { id: string; span: number },
  ) {
    const old = this.#bySession.get(session);
    if (old !== undefined) {
      this.#bySession.delete(session);
      this.#bytes -= old.bytes.length;
    }
    if (parsed.layout === undefined || parsed.bytes.length > this.#maxBytes) return;
    this.#bySession.set(session, {
      path: route.path,
      bytes: parsed.bytes,
      body: parsed.body,
      layout: parsed.layout,
      fingerprint: fingerprint?.id,
      fingerprintSpan: fingerprint?.span ?? Number.POSITIVE_INFINITY,
    });
    this.#bytes += parsed.bytes.length;
    for (const [oldest, kept] of this.#bySession) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#bySession.delete(oldest);
      this.#bytes -= kept.bytes.length;
    }
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

  /** The kept body this one extends the most, and how many of its messages it repeats. */
  #closest(route: ProxyRoute, bytes: Buffer): { kept: RememberedBody; count: number } | undefined {
    let best: { kept: RememberedBody; count: number } | undefined;
    for (const kept of this.#bySession.values()) {
      if (kept.path !== route.path) continue;
      const ends = kept.layout.ends;
      // One spot first (the end of the middle message): another conversation differs there.
      const probe = ends[ends.length >> 1]!;
      const probeFrom = Math.max(kept.layout.start, probe - PROBE_BYTES);
      if (bytes.length <= probe || kept.bytes.compare(bytes, probeFrom, probe, probeFrom, probe) !== 0)
        continue;
      const count = endsUpTo(ends, firstDifference(kept.bytes, bytes, kept.layout.end));
      if (count > (best?.count ?? 0)) best = { kept, count };
      if (count === ends.length) break;
    }
    return best;
  }

  #fromKept(route: ProxyRoute, bytes: Buffer): ParsedRequest | undefined {
    if (this.#bySession.size === 0) return undefined;
    const closest = this.#closest(route, bytes);
    if (closest === undefined) return undefined;
    const { kept, count } = closest;
    const key = route.messagesKey;
    const keptMessages = kept.body[key] as unknown[];
    // The separator after the last message taken: the new messages and the rest follow it.
    const separator = kept.layout.ends[count - 1]!;
    const ends = kept.layout.ends.slice(0, count);
    const end = scanElements(bytes, separator, ends);
    if (end < 0) return undefined;
    const keptEnd = kept.layout.end;
    const sameRest =
      bytes.length - end === kept.bytes.length - keptEnd &&
      kept.bytes.compare(bytes, end, bytes.length, keptEnd, kept.bytes.length) === 0;
    let added: unknown[];
    let body: Json;
    try {
      if (sameRest) {
        added = JSON.parse(`[${this.#marker}${bytes.toString('utf8', separator, end + 1)}`) as unknown[];
        body = { ...kept.body };
      } else {
        const rest = JSON.parse(
          `{${JSON.stringify(key)}:[${this.#marker}${bytes.toString('utf8', separator)}`,
        ) as Json;
        added = rest[key] as unknown[];
        if (!Array.isArray(added) || added[0] !== this.#markerValue) return undefined;
        body = {};
        for (const name of kept.layout.keysBefore) body[name] = kept.body[name];
        Object.assign(body, rest);
      }
    } catch {
      return undefined;
    }
    const messages = keptMessages.slice(0, count);
    for (let i = 1; i < added.length; i++) messages.push(added[i]);
    if (messages.length !== ends.length) return undefined;
    body[key] = messages;
    const layout = { start: kept.layout.start, ends, end, keysBefore: kept.layout.keysBefore };
    return { bytes, body, layout, reused: count, from: kept };
  }
}
