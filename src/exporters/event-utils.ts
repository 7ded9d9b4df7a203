import type { AnyCompactEvent } from '../core/events/events.js';
import { getDefaultRedactor, type Redactor, redactDeep } from '../core/redaction/redactor.js';
import { hashSessionId } from '../core/session/hash-session-id.js';
import { safeSessionSegment } from '../storage/session-path.js';

export { hashSessionId, SESSION_HASH_KEY_ENV } from '../core/session/hash-session-id.js';

/** The `operationId` of an event (one per preflight/compact call), when it carries one. */
export function operationIdOf(event: AnyCompactEvent): string | undefined {
  const value = (event as { operationId?: unknown }).operationId;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `tEst` -> `t_est`, `usagePct` -> `usage_pct` (the spec's property names). */
export function snakeCase(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** A JSON-safe copy with snake_case keys; bigints become strings, cycles and functions are dropped. */
export function toWireValue(value: unknown, seen: WeakSet<object> = new WeakSet()): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value.toString();
    case 'object': {
      if (seen.has(value)) return '[Circular]';
      seen.add(value);
      try {
        if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
        if (value instanceof Error) return { name: value.name, message: value.message };
        if (Array.isArray(value)) return value.map((item) => toWireValue(item, seen) ?? null);
        const out: Record<string, unknown> = {};
        for (const [key, item] of Object.entries(value)) {
          const wire = toWireValue(item, seen);
          if (wire !== undefined) out[snakeCase(key)] = wire;
        }
        return out;
      } finally {
        seen.delete(value);
      }
    }
    default:
      return undefined;
  }
}

/** Applies an optional exporter-level redactor to an event (a copy), never throwing. */
export function redactEvent(event: AnyCompactEvent, redact: Redactor | undefined): AnyCompactEvent {
  if (!redact) return event;
  return redactDeep(event, redact);
}

/** What the built-in exporters do to an event before it leaves the process. */
export interface ExportPrivacyOptions {
  /**
   * A last-line redactor applied to every event before it is sent. The manager already
   * redacts what it enqueues; this is defence in depth for events built elsewhere.
   * @default undefined
   */
  redact?: Redactor;
  /**
   * Replace the session id by {@link hashSessionId} everywhere in the exported event: its
   * `sessionId`, a `traceId` equal to it (the default trace id), trace names and metadata,
   * every string property equal to it, and every path segment holding it (the archive
   * folder in `compact.archival` locations, whether the id is written as is, path-encoded or
   * URL-encoded). An id of 8 or more characters is also replaced inside longer strings
   * (summaries). Without it, session ids are exported verbatim (they are identifiers, never
   * redacted).
   * @default false
   */
  hashSessionIds?: boolean;
  /**
   * The secret of the keyed hash used by `hashSessionIds` (HMAC-SHA256). Use the same key in
   * every process so that one session's traces group together.
   * @default process.env.COMPACT_SESSION_HASH_KEY (none: an unkeyed hash and a warning)
   */
  hashKey?: string;
}

/** Redacts (when asked) then hashes the session id (when asked): a copy, or the event itself. */
export function prepareEvent(event: AnyCompactEvent, options: ExportPrivacyOptions): AnyCompactEvent {
  const redacted = redactEvent(event, options.redact);
  if (!options.hashSessionIds) return redacted;
  const id = String(redacted.sessionId);
  return mapStrings(redacted, sessionIdSwap(id, hashSessionId(id, options.hashKey))) as AnyCompactEvent;
}

/**
 * A free text that is no event (a thrown error's message) as it may leave the process: redacted
 * (by `options.redact`, else the default rules: it never went through the manager's redactor),
 * then the session id hashed when `hashSessionIds` asks.
 */
export function prepareText(text: string, sessionId: string, options: ExportPrivacyOptions): string {
  const redacted = (options.redact ?? getDefaultRedactor())(text);
  if (!options.hashSessionIds) return redacted;
  return sessionIdSwap(sessionId, hashSessionId(sessionId, options.hashKey))(redacted);
}

/**
 * Replaces a session id in one string: the whole string, a path segment (`/{id}/`, as is,
 * path-encoded by the archive or URL-encoded), or (ids of 8+ characters) any occurrence.
 */
function sessionIdSwap(id: string, hashed: string): (text: string) => string {
  // Longest first: the archive's segment of a mixed-case id holds the id plus a suffix.
  const forms = [...new Set([id, safeSessionSegment(id), encodeURIComponent(id)])]
    .filter((form) => form !== '')
    .sort((a, b) => b.length - a.length);
  return (text) => {
    if (text === id) return hashed;
    let out = text;
    for (const form of forms) {
      if (form.length >= 8) out = out.replaceAll(form, hashed);
      else if (out.includes(`/${form}`)) out = replaceSegment(out, form, hashed);
    }
    return out;
  };
}

/** Replaces `form` where it is a whole path segment (between `/` and `/` or the end). */
function replaceSegment(text: string, form: string, hashed: string): string {
  const parts = text.split('/');
  for (let i = 1; i < parts.length; i += 1) if (parts[i] === form) parts[i] = hashed;
  return parts.join('/');
}

/** A copy of a JSON-like value with every string passed through `map` (cycles kept). */
function mapStrings(
  value: unknown,
  map: (text: string) => string,
  seen = new WeakMap<object, unknown>(),
): unknown {
  if (typeof value === 'string') return map(value);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(mapStrings(item, map, seen));
    return out;
  }
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const [key, item] of Object.entries(value)) out[key] = mapStrings(item, map, seen);
  return out;
}

/** Epoch milliseconds to ISO-8601 UTC with `Z`, tolerating bad input (falls back to now). */
export function isoTime(epochMs: unknown): string {
  const value = typeof epochMs === 'number' && Number.isFinite(epochMs) ? epochMs : Date.now();
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? new Date().toISOString() : date.toISOString();
}

/** The summary text of a `compact.summary_created` event, if any. */
export function summaryTextOf(event: AnyCompactEvent): string | undefined {
  if (event.name !== 'compact.summary_created') return undefined;
  const summary = (event.properties as { summary?: unknown } | undefined)?.summary;
  return typeof summary === 'string' ? summary : undefined;
}

/**
 * Calls a caller's callback (a log sink, an error reporter) so that it never throws into the
 * agent loop: a throw is dropped, and so is an async callback's rejection, which would
 * otherwise be unhandled and end the process.
 */
export function callSafely<A extends unknown[]>(callback: (...args: A) => unknown, ...args: A): void {
  try {
    const result = callback(...args);
    if (result instanceof Promise) result.catch(() => {});
  } catch {
    // Nothing to do: the callback's failure must not reach the agent loop.
  }
}
