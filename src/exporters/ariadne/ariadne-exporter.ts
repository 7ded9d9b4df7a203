import type { AnyCompactEvent, EventExporter } from '../../core/events/events.js';
import {
  type ExportPrivacyOptions,
  isoTime,
  operationIdOf,
  prepareEvent,
  summaryTextOf,
  toWireValue,
} from '../event-utils.js';
import { groupAriadneBatches } from './ariadne-batches.js';
import type { AriadneEvent, AriadneSpanEvent, AriadneTraceEvent } from './ariadne-event.js';

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
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const doFetch = options.fetch ?? globalThis.fetch;
  /** Trace events built, by trace id, until a POST carrying them succeeds. */
  const unsentTraces = new Map<string, AriadneTraceEvent>();
  /** Trace ids whose trace event Ariadne accepted. */
  const sentTraces = new Set<string>();
  /** Spans not delivered because the receiver could not be reached, oldest first. */
  let pending: AriadneSpanEvent[] = [];
  let closed = false;

  const warn = (line: string) => {
    try {
      log(`[Ariadne] ${line}`);
    } catch {
      // A broken log sink must not turn into an exception in the agent loop.
    }
  };

  /**
   * `unreachable`: the body did not arrive; `timeout`: it may have arrived (a slow receiver),
   * so its spans are not sent again. Either way the caller stops early.
   */
  const post = async (
    body: string,
    count: number,
    attempts: number,
  ): Promise<'ok' | 'rejected' | 'unreachable' | 'timeout'> => {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const response = await doFetch(url, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await response.text();
        if (response.ok) return 'ok';
        warn(`POST ${url} answered ${response.status} for ${count} events: ${text.slice(0, 500)}`);
        return 'rejected';
      } catch (error) {
        const name = (error as Error)?.name;
        const timedOut = name === 'TimeoutError' || name === 'AbortError';
        if (timedOut && attempt < attempts) continue;
        const reason = timedOut
          ? `timed out after ${timeoutMs} ms${attempt > 1 ? ' (retried once)' : ''}`
          : describeError(error);
        warn(`POST ${url} failed for ${count} events: ${reason}`);
        return timedOut ? 'timeout' : 'unreachable';
      }
    }
    return 'timeout';
  };

  const remember = (event: AnyCompactEvent): AriadneSpanEvent => {
    const traceId = String(event.traceId);
    if (traceEvents && !sentTraces.has(traceId) && !unsentTraces.has(traceId)) {
      if (unsentTraces.size >= 10_000) unsentTraces.clear();
      unsentTraces.set(traceId, {
        type: 'trace',
        trace_id: traceId,
        name: `agent-compaction ${String(event.sessionId)}`,
        started_at: isoTime(event.startTime),
        metadata: { agent_name: agentName, session_id: String(event.sessionId), source: 'agent-compaction' },
      });
    }
    return toAriadneSpan(event, { kind });
  };

  /** The spans with, before the first span of each unsent trace, its trace event. */
  const withTraceEvents = (spans: readonly AriadneSpanEvent[]): AriadneEvent[] => {
    const wire: AriadneEvent[] = [];
    const added = new Set<string>();
    for (const span of spans) {
      const trace = unsentTraces.get(span.trace_id);
      if (trace && !added.has(span.trace_id)) {
        added.add(span.trace_id);
        wire.push(trace);
      }
      wire.push(span);
    }
    return wire;
  };

  /**
   * Sends spans in batches; keeps what was not delivered for the next attempt. A trace event
   * counts as sent only when its POST succeeded, so one in a failed or timed-out batch goes
   * again with the next spans of its trace.
   */
  const deliver = async (spans: AriadneSpanEvent[], attempts: number) => {
    const batches = groupAriadneBatches(withTraceEvents(spans), maxBodyBytes);
    for (const [index, batch] of batches.entries()) {
      const outcome = await post(batch.body, batch.events.length, attempts);
      if (outcome === 'ok') {
        for (const event of batch.events) {
          if (event.type !== 'trace') continue;
          unsentTraces.delete(event.trace_id);
          if (sentTraces.size >= 10_000) sentTraces.clear();
          sentTraces.add(event.trace_id);
        }
      } else if (outcome !== 'rejected') {
        const undelivered = batches
          .slice(outcome === 'timeout' ? index + 1 : index)
          .flatMap((rest) => rest.events)
          .filter((event): event is AriadneSpanEvent => event.type === 'span');
        keep(undelivered);
        return;
      }
    }
  };

  const keep = (spans: AriadneSpanEvent[]) => {
    pending = [...spans, ...pending];
    if (pending.length > maxPending) {
      const dropped = pending.length - maxPending;
      pending = pending.slice(dropped);
      warn(`dropped ${dropped} undelivered event(s) (more than maxPendingEvents = ${maxPending})`);
    } else if (spans.length > 0) {
      warn(`keeping ${pending.length} undelivered event(s) for the next attempt`);
    }
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
        for (const raw of events) spans.push(remember(prepareEvent(raw, options)));
        await deliver(spans, 2);
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

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const detail =
    cause instanceof Error
      ? `${(cause as { code?: string }).code ?? cause.name}: ${cause.message}`
      : cause
        ? String(cause)
        : '';
  return detail ? `${error.message} (${detail})` : error.message;
}
