import type { Span, Tracer } from '@opentelemetry/api';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { hashSessionId, prepareEvent, prepareText } from '../event-utils.js';
import { COMPACTION_SPAN_NAME, recordCompaction } from './compaction-attributes.js';
import { loadApi, type OtelApi, type OtelOptions, TRACER_NAME } from './otel-api.js';

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
          attributes: { 'gen_ai.conversation.id': conversationId(sessionId, options) },
        },
        async (span) => {
          const events: AnyCompactEvent[] = [];
          collectors.set(span, events);
          try {
            const call = () => original.call(manager, sessionId, messages, callOptions);
            const describe = (error: unknown) => exceptionOf(error, String(sessionId), options);
            return await traceCall(otel, tracer, span, events, call, describe);
          } finally {
            collectors.delete(span);
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

/** The span's `gen_ai.conversation.id`: the session id, or its keyed hash with `hashSessionIds`. */
function conversationId(sessionId: unknown, options: OtelOptions): string {
  return options.hashSessionIds ? hashSessionId(String(sessionId), options.hashKey) : String(sessionId);
}

/** What a span records of a thrown error. */
interface SafeException {
  name: string;
  message: string;
  code?: string;
}

/**
 * A thrown error as the span records it: its name and code, and its message made safe like the
 * events (a storage error may quote a secret or the archive path holding the session id). No
 * stack: it repeats the raw message.
 */
function exceptionOf(error: unknown, sessionId: string, options: OtelOptions): SafeException {
  const raw = String((error as Error)?.message ?? error);
  const name = error instanceof Error ? error.name : 'Error';
  const code = (error as { code?: unknown } | undefined)?.code;
  return {
    name,
    message: prepareText(raw, sessionId, options),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

/**
 * Runs one call in its span: a throw records the exception and an ERROR status and is rethrown;
 * either way the span gets the attributes of the call's `events` and ends.
 */
async function traceCall(
  otel: OtelApi,
  tracer: Tracer,
  span: Span,
  events: AnyCompactEvent[],
  call: () => Promise<unknown>,
  describe: (error: unknown) => SafeException,
): Promise<unknown> {
  try {
    return await call();
  } catch (error) {
    try {
      const exception = describe(error);
      span.recordException(exception);
      span.setStatus({ code: otel.SpanStatusCode.ERROR, message: exception.message });
    } catch {
      // Instrumentation must never replace the caller's error.
    }
    throw error;
  } finally {
    try {
      recordCompaction(otel, tracer, span, events);
    } catch {
      // Instrumentation must never break the agent loop.
    }
    span.end();
  }
}
