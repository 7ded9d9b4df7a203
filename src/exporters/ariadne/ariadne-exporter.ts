import { terminalText } from '../../cli/terminal-text.js';
import type { AnyCompactEvent, EventExporter } from '../../core/events/events.js';
import {
  callSafely,
  type ExportPrivacyOptions,
  isoTime,
  operationIdOf,
  prepareEvent,
  summaryTextOf,
  toWireValue,
} from '../event-utils.js';
import { groupAriadneBatches } from './ariadne-batches.js';
import type { AriadneEvent, AriadneSpanEvent } from './ariadne-event.js';
import { type AriadneTarget, postToAriadne } from './ariadne-post.js';
import { AriadneTraces } from './ariadne-traces.js';
import { describeError } from './describe-error.js';

export { splitAriadneBatches } from './ariadne-batches.js';

/** Options of {@link ariadneExporter}. */
export interface AriadneExporterOptions extends ExportPrivacyOptions {
  /**
   * Ariadne's ingest endpoint (the `COMPACT_ARIADNE_URL` setting).
   * @default 'http://localhost:5175/ingest'
   */
  url?: string;
  /**
   * Time limit of one POST in milliseconds; a POST that times out is retried once.
   * @default 2000
   */
  timeoutMs?: number;
  /**
   * Largest request body in bytes; batches are split to stay under it (Ariadne answers 413
   * above 262,144 bytes).
   * @default 256_000
   */
  maxBodyBytes?: number;
  /**
   * `metadata.agent_name` of the trace event (Ariadne's UI groups traces by it).
   * @default 'agent-compaction'
   */
  agentName?: string;
  /**
   * The span `kind` shown by Ariadne.
   * @default 'compaction'
   */
  kind?: string;
  /**
   * Send one `trace` event per trace id (with string metadata). Turn off when the trace
   * belongs to the caller (e.g. an OpenAI Agents run already exported to Ariadne).
   * @default true
   */
  traceEvents?: boolean;
  /**
   * Extra HTTP headers (e.g. an auth header in front of a shared Ariadne).
   * @default {}
   */
  headers?: Record<string, string>;
  /**
   * Most span events kept for a later attempt when the receiver cannot be reached; the
   * oldest are dropped beyond it (and counted on stderr).
   * @default 1000
   */
  maxPendingEvents?: number;
  /**
   * Where failures are written.
   * @default a line on `process.stderr`
   */
  log?: (line: string) => void;
  /**
   * The `fetch` implementation.
   * @default globalThis.fetch
   */
  fetch?: typeof fetch;
}

/** The Ariadne exporter's defaults. */
export const DEFAULT_ARIADNE_OPTIONS = Object.freeze({
  url: 'http://localhost:5175/ingest',
  timeoutMs: 2000,
  maxBodyBytes: 256_000,
  agentName: 'agent-compaction',
  kind: 'compaction',
  maxPendingEvents: 1000,
});

/** Options of {@link toAriadneSpan}. */
export interface ToAriadneSpanOptions {
  /** @default 'compaction' */
  kind?: string;
}

/**
 * Translates one event into Ariadne's span event: `startTime`/`endTime` become
 * `started_at`/`ended_at` (UTC `Z`), the properties (snake_case, as the spec names them) go
 * into `data` with `session_id`, `operation_id` and `duration_ms`, and a summary's text goes
 * into `data.output_text` (Ariadne's Response tab).
 */
export function toAriadneSpan(event: AnyCompactEvent, options: ToAriadneSpanOptions = {}): AriadneSpanEvent {
  const start = isoTime(event.startTime);
  let end = isoTime(event.endTime);
  if (end < start) end = start;
  const properties = (toWireValue(event.properties ?? {}) ?? {}) as Record<string, unknown>;
  const summary = summaryTextOf(event);
  if (summary !== undefined) delete properties.summary;
  const data: Record<string, unknown> = {
    ...properties,
    session_id: String(event.sessionId),
    duration_ms: Math.max(0, Date.parse(end) - Date.parse(start)),
  };
  const operationId = operationIdOf(event);
  if (operationId !== undefined) data.operation_id = operationId;
  if (summary !== undefined) data.output_text = summary;
  const span: AriadneSpanEvent = {
    type: 'span',
    trace_id: String(event.traceId),
    span_id: String(event.spanId),
    kind: options.kind ?? DEFAULT_ARIADNE_OPTIONS.kind,
    name: String(event.name),
    started_at: start,
    ended_at: end,
    data,
    status: event.status === 'error' ? 'error' : 'ok',
  };
  if (typeof event.parentId === 'string' && event.parentId !== '') span.parent_id = event.parentId;
  return span;
}

/**
 * Exports events to the Ariadne Trace Viewer (`POST /ingest` with `{batch: [...]}`).
 *
 * Each event becomes one Ariadne span (see {@link toAriadneSpan}); the spans of a trace are
 * preceded by one `trace` event whose metadata (strings only) names the session and the
 * agent. A trace counts as sent only once a POST carrying its trace event succeeded: until
 * then, every later batch with spans of that trace carries the trace event again.
 *
 * Bodies stay under 256 KB. A POST times out after `timeoutMs` (2 s) and is retried once on
 * timeout; every failure is written to stderr with the prefix `[Ariadne]` and nothing is
 * ever thrown. When the receiver cannot be reached (connection refused or reset), the
 * undelivered spans (at most `maxPendingEvents`) are kept and sent before the next batch, by
 * `forceFlush()`, or by `shutdown()` (one attempt, no retry, so shutdown takes at most
 * `timeoutMs`); after a timeout the receiver may have the batch, so only the batches after it
 * are kept. One `export` takes at most about `2 * timeoutMs`.
 *
 * @example
 * ```ts
 * const manager = new CompactManager({
 *   model: 'gpt-4o', maxContextTokens: 128_000,
 *   exporters: [ariadneExporter({ url: process.env.COMPACT_ARIADNE_URL })],
 * });
 * ```
 */
export function ariadneExporter(options: AriadneExporterOptions = {}): EventExporter {
  const url = options.url ?? DEFAULT_ARIADNE_OPTIONS.url;
  const timeoutMs = options.timeoutMs ?? DEFAULT_ARIADNE_OPTIONS.timeoutMs;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_ARIADNE_OPTIONS.maxBodyBytes;
  const agentName = options.agentName ?? DEFAULT_ARIADNE_OPTIONS.agentName;
  const kind = options.kind ?? DEFAULT_ARIADNE_OPTIONS.kind;
  const maxPending = options.maxPendingEvents ?? DEFAULT_ARIADNE_OPTIONS.maxPendingEvents;
  const traceEvents = options.traceEvents ?? true;
  const headers = { 'content-type': 'application/json', ...options.headers };
  const warn = ariadneWarn(options.log ?? ((line: string) => void process.stderr.write(`${line}\n`)));
  const traces = new AriadneTraces(agentName, traceEvents);
  /** Spans not delivered because the receiver could not be reached, oldest first. */
  let pending: AriadneSpanEvent[] = [];
  let closed = false;
  const target: AriadneTarget = {
    url,
    headers,
    timeoutMs,
    fetch: options.fetch ?? globalThis.fetch,
    warn,
  };

  /**
   * Sends spans in batches; keeps what was not delivered for the next attempt. A trace event
   * counts as sent only when its POST succeeded, so one in a failed or timed-out batch goes
   * again with the next spans of its trace.
   */
  const deliver = async (spans: AriadneSpanEvent[], attempts: number) => {
    const batches = groupAriadneBatches(traces.withTraceEvents(spans), maxBodyBytes);
    for (const [index, batch] of batches.entries()) {
      const outcome = await postToAriadne(target, batch.body, batch.events.length, attempts);
      if (outcome === 'ok') traces.markSent(batch.events);
      else if (outcome !== 'rejected') {
        // After a timeout the receiver may have the batch: only the batches after it are kept.
        keep(spansOf(batches.slice(outcome === 'timeout' ? index + 1 : index)));
        return;
      }
    }
  };

  const keep = (spans: AriadneSpanEvent[]) => {
    pending = keepUndelivered(spans, pending, maxPending, warn);
  };

  const flushPending = async (attempts: number) => {
    if (pending.length === 0) return;
    const spans = pending;
    pending = [];
    try {
      await deliver(spans, attempts);
    } catch (error) {
      warn(`export failed: ${describeError(error)}`);
    }
  };

  return {
    name: 'ariadne',
    async export(events) {
      if (closed || events.length === 0) return;
      try {
        const spans = [...pending];
        pending = [];
        await deliver(spans.concat(tracedSpans(events, options, traces, kind)), 2);
      } catch (error) {
        warn(`export failed: ${describeError(error)}`);
      }
    },
    async forceFlush() {
      await flushPending(2);
    },
    async shutdown() {
      if (closed) return;
      closed = true;
      await flushPending(1);
    },
  };
}

/**
 * A warning sink that prefixes `[Ariadne]`, makes terminal controls visible (a receiver's
 * answer is quoted in the line; stderr is a terminal) and never throws (a broken log sink must
 * not turn into an exception in the agent loop).
 */
function ariadneWarn(log: (line: string) => void): (line: string) => void {
  // A sink that throws or rejects loses the warning; the agent loop goes on.
  return (line) => callSafely(log, terminalText(`[Ariadne] ${line}`));
}

/** The span events of `batches` (their trace events are sent again from the traces). */
function spansOf(batches: readonly { events: readonly AriadneEvent[] }[]): AriadneSpanEvent[] {
  return batches
    .flatMap((batch) => batch.events)
    .filter((event): event is AriadneSpanEvent => event.type === 'span');
}

/**
 * `spans` not delivered, before the ones already `pending`, at most `maxPending` of them (the
 * oldest are dropped, with a warning).
 */
function keepUndelivered(
  spans: AriadneSpanEvent[],
  pending: AriadneSpanEvent[],
  maxPending: number,
  warn: (line: string) => void,
): AriadneSpanEvent[] {
  const kept = [...spans, ...pending];
  if (kept.length > maxPending) {
    const dropped = kept.length - maxPending;
    warn(`dropped ${dropped} undelivered event(s) (more than maxPendingEvents = ${maxPending})`);
    return kept.slice(dropped);
  }
  if (spans.length > 0) warn(`keeping ${kept.length} undelivered event(s) for the next attempt`);
  return kept;
}

/** The span of each event, prepared for export (privacy options), its trace remembered. */
function tracedSpans(
  events: readonly AnyCompactEvent[],
  options: AriadneExporterOptions,
  traces: AriadneTraces,
  kind: string,
): AriadneSpanEvent[] {
  const spans: AriadneSpanEvent[] = [];
  for (const raw of events) {
    const event = prepareEvent(raw, options);
    traces.remember(event);
    spans.push(toAriadneSpan(event, { kind }));
  }
  return spans;
}
