/**
 * Delivers the manager's events: redacted once, handed synchronously to in-process
 * listeners (in the caller's async context, so OpenTelemetry spans nest under the caller's
 * span), then queued for exporters, which never make a preflight wait.
 */

import { type Redactor, redactDeep } from '../redaction/redactor.js';
import type {
  AnyCompactEvent,
  CompactEvent,
  CompactEventListener,
  CompactEventName,
  CompactEventProperties,
  EventExporter,
} from './events.js';
import { newSpanId } from './events.js';
import { ExportQueue, type ExportQueueOptions, exporterErrorLine } from './export-queue.js';

/** The ids one `preflight`/`compact` call gives its events. */
export interface OperationContext {
  readonly sessionId: string;
  readonly operationId: string;
  readonly traceId: string;
  readonly parentId: string | undefined;
  /** Events to archive with the session (collected while compacting). */
  archived: AnyCompactEvent[] | undefined;
  /**
   * While set, events are built (ids, times) but delivered only by `release`: a compaction's
   * decision is delivered first, with what the compaction kept, then the events under it.
   */
  held?: AnyCompactEvent[] | undefined;
}

/** Timing of one event. */
export interface EventTiming {
  start: number;
  end?: number;
  parentId?: string;
  status?: 'ok' | 'error';
}

/** The manager's event bus. */
/** The context of a new operation of `sessionId`: a fresh span, under the caller's trace. */
export function newOperation(
  sessionId: string,
  options: { traceId?: string | undefined; parentSpanId?: string | undefined } = {},
): OperationContext {
  return {
    sessionId,
    operationId: newSpanId(),
    traceId: options.traceId ?? sessionId,
    parentId: options.parentSpanId,
    archived: undefined,
  };
}

export class EventBus {
  readonly #listeners = new Map<string, Set<CompactEventListener>>();
  readonly #queue: ExportQueue;
  readonly #redact: Redactor | undefined;
  readonly #hasExporters: boolean;
  readonly #redactionFailures: unknown[];
  #redactionWarned = false;
  #redactionFailureReported = false;

  constructor(
    exporters: readonly EventExporter[],
    queueOptions: ExportQueueOptions | undefined,
    redact: Redactor | undefined,
    redactionFailures: unknown[] = [],
  ) {
    // The default error line is redacted with the manager's redactor (its extra patterns too).
    const options =
      redact && !queueOptions?.onExporterError
        ? { ...queueOptions, onExporterError: exporterErrorLine(redact) }
        : queueOptions;
    this.#queue = new ExportQueue([...exporters], options);
    this.#hasExporters = exporters.length > 0;
    this.#redact = redact;
    this.#redactionFailures = redactionFailures;
  }

  /** One `compact.error` for the values the redactor could not scan (they were replaced whole). */
  #reportRedactionFailure(context: OperationContext, start: number): void {
    const failures = this.#redactionFailures;
    if (failures.length === 0) return;
    const first = failures[0];
    failures.length = 0;
    if (this.#redactionFailureReported) return;
    this.#redactionFailureReported = true;
    this.#deliver(
      context,
      'compact.error',
      {
        errorType: 'redaction_failed',
        // The error's message only: it never holds the scanned text.
        message: `a value could not be scanned for secrets and was replaced whole: ${this.#redact!(
          first instanceof Error ? `${first.name}: ${first.message}`.slice(0, 200) : 'unknown error',
        )}`,
        fallback: 'value replaced by <REDACTED>',
        context: { severity: 'medium' },
      },
      { start },
    );
  }

  /** True when someone receives events (a listener or an exporter): otherwise they are not built. */
  get observed(): boolean {
    return this.#hasExporters || this.#listeners.size > 0;
  }

  /** Subscribes to one event or to all (`'*'`); returns the unsubscribe function. */
  on<N extends CompactEventName>(name: N | '*', listener: CompactEventListener<N>): () => void {
    let set = this.#listeners.get(name);
    if (!set) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(listener as CompactEventListener);
    return () => {
      set.delete(listener as CompactEventListener);
      if (set.size === 0 && this.#listeners.get(name) === set) this.#listeners.delete(name);
    };
  }

  /** Redacts and delivers one event. */
  emit<N extends CompactEventName>(
    context: OperationContext,
    name: N,
    properties: CompactEventProperties[N],
    timing: EventTiming,
  ): CompactEvent<N> {
    let props = properties;
    if (this.#redact) {
      props = redactDeep(properties, this.#redact);
      this.#reportRedactionFailure(context, timing.start);
    } else if (!this.#redactionWarned) {
      this.#redactionWarned = true;
      this.#deliver(
        context,
        'compact.error',
        {
          errorType: 'redaction_disabled',
          message: 'redaction is disabled: events and archives carry message text unredacted',
          fallback: 'none',
          context: { severity: 'high' },
        },
        { start: timing.start },
      );
    }
    return this.#deliver(context, name, props, timing);
  }

  #deliver<N extends CompactEventName>(
    context: OperationContext,
    name: N,
    properties: CompactEventProperties[N],
    timing: EventTiming,
  ): CompactEvent<N> {
    const event: CompactEvent<N> = {
      type: 'span',
      name,
      traceId: context.traceId,
      spanId: newSpanId(),
      sessionId: context.sessionId,
      operationId: context.operationId,
      startTime: timing.start,
      endTime: Math.max(timing.end ?? Date.now(), timing.start),
      status: timing.status ?? (name === 'compact.error' ? 'error' : 'ok'),
      properties,
    };
    const parentId = timing.parentId ?? context.parentId;
    if (parentId !== undefined) event.parentId = parentId;
    if (context.held) context.held.push(event as AnyCompactEvent);
    else this.#dispatch(context, event as AnyCompactEvent);
    return event;
  }

  /** Starts holding the events of `context` (see `OperationContext.held`). */
  hold(context: OperationContext): void {
    context.held ??= [];
  }

  /** Delivers the events held for `context`, in order, and stops holding. */
  release(context: OperationContext): void {
    const held = context.held;
    context.held = undefined;
    for (const event of held ?? []) this.#dispatch(context, event);
  }

  #dispatch(context: OperationContext, event: AnyCompactEvent): void {
    const name = event.name;
    for (const key of [name, '*']) {
      const listeners = this.#listeners.get(key);
      if (!listeners) continue;
      for (const listener of listeners) {
        try {
          // An async listener's rejection is caught too: unhandled, it would end the process.
          const result: unknown = (listener as CompactEventListener)(event);
          if (result instanceof Promise) result.catch(listenerFailed);
        } catch (error) {
          listenerFailed(error);
        }
      }
    }
    this.#queue.enqueue(event);
    context.archived?.push(event);
  }

  /** Exports what is queued. */
  flush(): Promise<void> {
    return this.#queue.flush();
  }

  /** Flushes and shuts the exporters down. */
  shutdown(): Promise<void> {
    return this.#queue.shutdown();
  }
}

/** One stderr line for a listener that threw or rejected; never throws itself. */
function listenerFailed(error: unknown): void {
  try {
    process.stderr.write(
      `[agent-compaction] event listener failed: ${String((error as Error)?.message ?? error)}\n`,
    );
  } catch {
    // A closed stderr must not break the agent loop.
  }
}
