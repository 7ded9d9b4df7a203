import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import { CompactError } from '../../core/errors.js';
import type {
  AnyCompactEvent,
  CompactEvent,
  CompactEventName,
  EventExporter,
} from '../../core/events/events.js';
import { type ExportPrivacyOptions, hashSessionId, operationIdOf, prepareEvent } from '../event-utils.js';

type OtelApi = typeof import('@opentelemetry/api');

/** The name of the compaction span. */
export const COMPACTION_SPAN_NAME = 'agent.compaction';
/** The name of the summarizer's model-call span. */
export const SUMMARIZER_SPAN_NAME = 'chat';
const TRACER_NAME = 'agent-compaction';

/** Options shared by {@link otelExporter} and {@link instrumentManager}. */
export interface OtelOptions extends ExportPrivacyOptions {
  /**
   * The tracer spans are created with.
   * @default api.trace.getTracer('agent-compaction')
   */
  tracer?: Tracer;
  /**
   * The `@opentelemetry/api` module (inject it when it cannot be imported, e.g. bundled).
   * @default await import('@opentelemetry/api')
   */
  api?: OtelApi;
}

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

async function loadApi(injected: OtelApi | undefined): Promise<OtelApi> {
  if (injected) return injected;
  try {
    return await import('@opentelemetry/api');
  } catch (error) {
    throw new CompactError('missing_dependency', 'install @opentelemetry/api: npm i @opentelemetry/api', {
      cause: error,
    });
  }
}

function find<N extends CompactEventName>(
  events: readonly AnyCompactEvent[],
  name: N,
): CompactEvent<N> | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    if (events[index]?.name === name) return events[index] as CompactEvent<N>;
  }
  return undefined;
}

function setNumber(attributes: Attributes, key: string, value: unknown): void {
  if (typeof value === 'number' && Number.isFinite(value)) attributes[key] = value;
}

/**
 * The attributes of an `agent.compaction` span, from the events of one operation:
 * `compaction.*` figures, `gen_ai.conversation.id`, and Langfuse's
 * `langfuse.observation.metadata.*` (strings) and `langfuse.observation.output` (the summary).
 */
export function compactionAttributes(events: readonly AnyCompactEvent[]): Attributes {
  const first = events[0];
  const estimate = find(events, 'compact.token_estimate');
  const decision = find(events, 'compact.trigger_decision');
  const summary = find(events, 'compact.summary_created');
  const pruned = find(events, 'compact.pruned_messages');
  const errors = events.filter((event) => event.name === 'compact.error');
  const archived = events.filter((event) => event.name === 'compact.archival');
  const attributes: Attributes = {};
  if (!first) return attributes;
  const sessionId = String(first.sessionId);
  const applied = pruned !== undefined;
  const tokensBefore =
    pruned?.properties.tokensBefore ?? estimate?.properties.tEst ?? decision?.properties.tEst;
  const tokensAfter = pruned?.properties.tokensAfter ?? (applied ? undefined : tokensBefore);
  attributes['gen_ai.conversation.id'] = sessionId;
  attributes['compaction.session_id'] = sessionId;
  const operationId = operationIdOf(first);
  if (operationId) attributes['compaction.operation_id'] = operationId;
  attributes['compaction.applied'] = applied;
  setNumber(attributes, 'compaction.tokens_before', tokensBefore);
  setNumber(attributes, 'compaction.tokens_after', tokensAfter);
  if (estimate) {
    attributes['compaction.model'] = String(estimate.properties.model);
    setNumber(attributes, 'compaction.max_tokens', estimate.properties.maxTokens);
    setNumber(attributes, 'compaction.usage_pct', estimate.properties.usagePct);
    setNumber(attributes, 'compaction.history_messages', estimate.properties.messageCount);
  }
  if (decision) {
    attributes['compaction.triggered'] = decision.properties.triggered === true;
    attributes['compaction.reason'] = String(decision.properties.reason);
    attributes['compaction.manual'] = decision.properties.manual === true;
    if (decision.properties.note) attributes['compaction.note'] = String(decision.properties.note);
    setNumber(attributes, 'compaction.budget', decision.properties.budget);
    setNumber(attributes, 'compaction.trigger_tokens', decision.properties.triggerTokens);
    if (decision.properties.policy?.strategy)
      attributes['compaction.strategy'] = String(decision.properties.policy.strategy);
    setNumber(attributes, 'compaction.keep_recent_turns', decision.properties.policy?.keepRecentTurns);
  }
  const kept = pruned?.properties.kept ?? decision?.properties.kept;
  if (kept) {
    setNumber(attributes, 'compaction.kept.pinned', kept.pinned);
    setNumber(attributes, 'compaction.kept.recent_turns', kept.recentTurns);
    setNumber(attributes, 'compaction.kept.tool_pairs', kept.toolPairs);
  }
  setNumber(
    attributes,
    'compaction.pruned',
    pruned?.properties.prunedCount ?? decision?.properties.prunedCount ?? 0,
  );
  if (summary) {
    attributes['compaction.strategy'] = String(summary.properties.strategy);
    attributes['compaction.summarizer'] = String(summary.properties.summarizer);
    setNumber(attributes, 'compaction.summary_tokens', summary.properties.summaryTokens);
    setNumber(attributes, 'compaction.input_messages', summary.properties.inputMessages);
    setNumber(attributes, 'compaction.compression_ratio', summary.properties.compressionRatio);
    setNumber(attributes, 'compaction.version', summary.properties.version);
    if (typeof summary.properties.summary === 'string') {
      attributes['langfuse.observation.output'] = summary.properties.summary;
    }
  }
  if (archived.length > 0) attributes['compaction.archived'] = archived.length;
  if (errors.length > 0) {
    attributes['compaction.errors'] = errors.length;
    attributes['compaction.fallback'] = String(errors.at(-1)?.properties.fallback ?? '');
  }
  const metadata: Record<string, unknown> = {
    traceId: first.traceId,
    historyMessages: estimate?.properties.messageCount,
    keepLastN: decision?.properties.policy?.keepRecentTurns,
    originalEstimatedTokens: tokensBefore,
    compactedEstimatedTokens: tokensAfter,
    compactionApplied: applied,
  };
  for (const [key, value] of Object.entries(metadata)) {
    if (value !== undefined && value !== null)
      attributes[`langfuse.observation.metadata.${key}`] = String(value);
  }
  return attributes;
}

/**
 * Completes an `agent.compaction` span from its operation's events: sets the attributes,
 * records each `compact.error` as an exception with an ERROR status, and adds a `chat` child
 * span for the summarizer's model call (when it made one) with `gen_ai.request.model` and
 * `gen_ai.usage.*`. Does not end `span`.
 */
export function recordCompaction(
  api: OtelApi,
  tracer: Tracer,
  span: Span,
  events: readonly AnyCompactEvent[],
): void {
  span.setAttributes(compactionAttributes(events));
  const errors = events.filter((event) => event.name === 'compact.error');
  for (const error of errors) {
    span.addEvent(
      'exception',
      {
        'exception.type': String(error.properties.errorType),
        'exception.message': String(error.properties.message),
        'compaction.fallback': String(error.properties.fallback),
      },
      error.startTime,
    );
  }
  if (errors.length > 0) {
    const last = errors.at(-1);
    span.setStatus({
      code: api.SpanStatusCode.ERROR,
      message: `${String(last?.properties.errorType)}: ${String(last?.properties.message)}`,
    });
  }
  const summary = find(events, 'compact.summary_created');
  if (summary && (summary.properties.model || summary.properties.usage)) {
    const parent = api.trace.setSpan(api.context.active(), span);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.conversation.id': String(summary.sessionId),
      'gen_ai.provider.name': String(summary.properties.summarizer),
    };
    if (summary.properties.model) attributes['gen_ai.request.model'] = String(summary.properties.model);
    setNumber(attributes, 'gen_ai.usage.input_tokens', summary.properties.usage?.inputTokens);
    setNumber(attributes, 'gen_ai.usage.output_tokens', summary.properties.usage?.outputTokens);
    if (typeof summary.properties.summary === 'string') {
      attributes['langfuse.observation.output'] = summary.properties.summary;
    }
    const chat = tracer.startSpan(
      SUMMARIZER_SPAN_NAME,
      { kind: api.SpanKind.CLIENT, startTime: summary.startTime, attributes },
      parent,
    );
    const summarizerFailed = errors.some((error) => /summar/i.test(String(error.properties.errorType)));
    if (summary.status === 'error' || summarizerFailed) chat.setStatus({ code: api.SpanStatusCode.ERROR });
    chat.end(Math.max(summary.endTime, summary.startTime));
  }
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

/** The parts of a `CompactManager` that {@link instrumentManager} wraps. */
export interface InstrumentableManager {
  on(name: '*', listener: (event: AnyCompactEvent) => void): () => void;
  compact(sessionId: string, messages: readonly unknown[], options?: object): Promise<unknown>;
  preflight(sessionId: string, messages: readonly unknown[], options?: object): Promise<unknown>;
  manualCompact?(sessionId: string, messages: readonly unknown[], options?: object): Promise<unknown>;
}

/**
 * Instruments a manager instance live: every `preflight`, `compact` and `manualCompact`
 * call runs inside an `agent.compaction` span started with `startActiveSpan`, so it nests
 * under the caller's active span (and anything the summarizer's SDK traces nests under it).
 * A `'*'` listener, which the manager calls synchronously in the caller's async context,
 * collects the operation's events; when the call settles the span gets its attributes (see
 * {@link compactionAttributes}), a `chat` child for the summarizer call, an ERROR status
 * for errors, and ends. A call that throws records the exception and rethrows it.
 *
 * Returns a function that removes the instrumentation.
 *
 * @example
 * ```ts
 * import { instrumentManager } from 'agent-compaction/otel';
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
 * const uninstrument = instrumentManager(manager);
 * await tracer.startActiveSpan('agent.turn', async (turn) => {
 *   const messages = await manager.preflight(sessionId, history); // agent.compaction nests under agent.turn
 *   turn.end();
 * });
 * ```
 */
export function instrumentManager<M extends InstrumentableManager>(
  manager: M,
  options: OtelOptions = {},
): () => void {
  const collectors = new WeakMap<Span, AnyCompactEvent[]>();
  let api: OtelApi | undefined;
  let apiPromise: Promise<OtelApi> | undefined;
  let warned = false;

  const unsubscribe = manager.on('*', (event) => {
    if (!api) return;
    const active = api.trace.getSpan(api.context.active());
    const events = active ? collectors.get(active) : undefined;
    if (events) events.push(prepareEvent(event, options));
  });

  type Method = (sessionId: string, messages: readonly unknown[], callOptions?: object) => Promise<unknown>;
  const methods = ['preflight', 'compact', 'manualCompact'] as const;
  const originals = new Map<string, Method>();
  const target = manager as unknown as Record<string, Method | undefined>;
  const ownBefore = new Set(methods.filter((name) => Object.hasOwn(manager, name)));

  for (const name of methods) {
    const original = target[name];
    if (typeof original !== 'function') continue;
    originals.set(name, original);
    target[name] = async function instrumented(sessionId, messages, callOptions) {
      apiPromise ??= loadApi(options.api);
      let otel: OtelApi;
      try {
        otel = await apiPromise;
      } catch (error) {
        // Instrumentation must never break the agent loop: without the API, run uninstrumented.
        if (!warned) {
          warned = true;
          process.stderr.write(
            `[agent-compaction] OpenTelemetry instrumentation disabled: ${(error as Error).message}\n`,
          );
        }
        return original.call(manager, sessionId, messages, callOptions);
      }
      api = otel;
      const active = otel.trace.getSpan(otel.context.active());
      // preflight and manualCompact call compact: one span per top-level call.
      if (active && collectors.has(active)) return original.call(manager, sessionId, messages, callOptions);
      const tracer = options.tracer ?? otel.trace.getTracer(TRACER_NAME);
      return tracer.startActiveSpan(
        COMPACTION_SPAN_NAME,
        {
          kind: otel.SpanKind.INTERNAL,
          attributes: {
            'gen_ai.conversation.id': options.hashSessionIds
              ? hashSessionId(String(sessionId))
              : String(sessionId),
          },
        },
        async (span) => {
          const events: AnyCompactEvent[] = [];
          collectors.set(span, events);
          try {
            return await original.call(manager, sessionId, messages, callOptions);
          } catch (error) {
            span.recordException(error instanceof Error ? error : String(error));
            span.setStatus({
              code: otel.SpanStatusCode.ERROR,
              message: String((error as Error)?.message ?? error),
            });
            throw error;
          } finally {
            try {
              recordCompaction(otel, tracer, span, events);
            } catch {
              // Instrumentation must never break the agent loop.
            }
            collectors.delete(span);
            span.end();
          }
        },
      );
    };
  }

  return () => {
    unsubscribe();
    for (const [name, original] of originals) {
      if (ownBefore.has(name as (typeof methods)[number])) target[name] = original;
      else delete target[name];
    }
  };
}
