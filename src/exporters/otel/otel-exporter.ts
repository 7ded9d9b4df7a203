import type { Context } from '@opentelemetry/api';
import type { AnyCompactEvent, EventExporter } from '../../core/events/events.js';
import { operationIdOf, prepareEvent } from '../event-utils.js';
import { COMPACTION_SPAN_NAME, recordCompaction } from './compaction-attributes.js';
import { loadApi, type OtelApi, type OtelOptions, TRACER_NAME } from './otel-api.js';

/** Options of {@link otelExporter}. */
export interface OtelExporterOptions extends OtelOptions {
  /**
   * The parent of every compaction span. Without it, an operation whose events carry a
   * W3C trace id (32 hex) and parent span id (16 hex), as when the caller passed
   * `traceId`/`parentSpanId` from its active span to `preflight`, nests under that span;
   * otherwise it starts a new trace.
   * @default undefined
   */
  parentContext?: Context;
  /**
   * How long an operation's events are held after its last one arrived before its span is
   * ended and handed to the SDK (events of one compaction can arrive in several batches).
   * `forceFlush()` and `shutdown()` end every pending span at once.
   * @default 1000
   */
  lingerMs?: number;
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

/**
 * An {@link EventExporter} that turns each compaction (the events sharing an
 * `operationId`) into an `agent.compaction` span with a `chat` child for the summarizer
 * call, after the fact, from the background queue. Its span nests under `parentContext`, or
 * under the caller's span when the events carry W3C ids; to nest under the caller's *active*
 * span without passing ids, use {@link instrumentManager} instead, which records the span
 * live in the caller's context.
 *
 * @example
 * ```ts
 * import { otelExporter } from 'agent-compaction/otel';
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000,
 *   exporters: [otelExporter()] });
 * const span = trace.getActiveSpan()?.spanContext();
 * await manager.preflight(id, messages, { traceId: span?.traceId, parentSpanId: span?.spanId });
 * ```
 */
export function otelExporter(options: OtelExporterOptions = {}): EventExporter {
  const lingerMs = options.lingerMs ?? 1000;
  const pending = new Map<string, { events: AnyCompactEvent[]; timer?: ReturnType<typeof setTimeout> }>();
  let closed = false;
  let apiPromise: Promise<OtelApi> | undefined;

  const emit = async (key: string) => {
    const group = pending.get(key);
    if (!group) return;
    pending.delete(key);
    if (group.timer) clearTimeout(group.timer);
    try {
      apiPromise ??= loadApi(options.api);
      const api = await apiPromise;
      const tracer = options.tracer ?? api.trace.getTracer(TRACER_NAME);
      const events = [...group.events].sort((a, b) => a.startTime - b.startTime);
      const first = events[0];
      if (!first) return;
      let parent = options.parentContext;
      if (!parent) {
        const root = events.find(
          (event) => event.parentId && !events.some((other) => other.spanId === event.parentId),
        );
        const traceId = String(first.traceId).toLowerCase();
        const parentId = root?.parentId?.toLowerCase();
        parent =
          HEX32.test(traceId) && parentId && HEX16.test(parentId)
            ? api.trace.setSpanContext(api.ROOT_CONTEXT, {
                traceId,
                spanId: parentId,
                traceFlags: api.TraceFlags.SAMPLED,
                isRemote: true,
              })
            : api.ROOT_CONTEXT;
      }
      const start = Math.min(...events.map((event) => event.startTime).filter(Number.isFinite));
      const end = Math.max(...events.map((event) => event.endTime).filter(Number.isFinite));
      const span = tracer.startSpan(
        COMPACTION_SPAN_NAME,
        { kind: api.SpanKind.INTERNAL, startTime: Number.isFinite(start) ? start : Date.now() },
        parent,
      );
      api.context.with(api.trace.setSpan(parent, span), () => recordCompaction(api, tracer, span, events));
      span.end(Number.isFinite(end) ? Math.max(end, start) : undefined);
    } catch (error) {
      process.stderr.write(
        `[agent-compaction] otel exporter: ${String((error as Error)?.message ?? error)}\n`,
      );
    }
  };

  const flushAll = () => Promise.all([...pending.keys()].map((key) => emit(key)));

  return {
    name: 'otel',
    async export(events) {
      if (closed) return;
      for (const raw of events) {
        const event = prepareEvent(raw, options);
        const key = `${String(event.sessionId)}\u0000${operationIdOf(event) ?? event.parentId ?? event.spanId}`;
        let group = pending.get(key);
        if (!group) {
          group = { events: [] };
          pending.set(key, group);
        }
        group.events.push(event);
        if (group.timer) clearTimeout(group.timer);
        group.timer = setTimeout(() => void emit(key), lingerMs);
        group.timer.unref?.();
      }
    },
    async forceFlush() {
      await flushAll();
    },
    async shutdown() {
      await flushAll();
      closed = true;
    },
  };
}
