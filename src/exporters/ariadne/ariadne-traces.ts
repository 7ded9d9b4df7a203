import type { AnyCompactEvent } from '../../core/events/events.js';
import { isoTime } from '../event-utils.js';
import type { AriadneEvent, AriadneSpanEvent, AriadneTraceEvent } from './ariadne-event.js';

/** Trace ids remembered at most, sent or not (the oldest are forgotten past it). */
const MAX_TRACES = 10_000;

/**
 * The Ariadne trace event of each session's trace: built with its first span, sent before the
 * first span of the trace in each POST until a POST carrying it succeeds.
 */
export class AriadneTraces {
  /** Trace events built, by trace id, until a POST carrying them succeeds. */
  readonly #unsent = new Map<string, AriadneTraceEvent>();
  /** Trace ids whose trace event Ariadne accepted. */
  readonly #sent = new Set<string>();

  constructor(
    private readonly agentName: string,
    private readonly enabled: boolean,
  ) {}

  /** Builds the trace event of `event`'s trace if it has none yet. */
  remember(event: AnyCompactEvent): void {
    const traceId = String(event.traceId);
    if (!this.enabled || this.#sent.has(traceId) || this.#unsent.has(traceId)) return;
    if (this.#unsent.size >= MAX_TRACES) this.#unsent.clear();
    this.#unsent.set(traceId, {
      type: 'trace',
      trace_id: traceId,
      name: `agent-compaction ${String(event.sessionId)}`,
      started_at: isoTime(event.startTime),
      metadata: {
        agent_name: this.agentName,
        session_id: String(event.sessionId),
        source: 'agent-compaction',
      },
    });
  }

  /** The spans with, before the first span of each unsent trace, its trace event. */
  withTraceEvents(spans: readonly AriadneSpanEvent[]): AriadneEvent[] {
    const wire: AriadneEvent[] = [];
    const added = new Set<string>();
    for (const span of spans) {
      const trace = this.#unsent.get(span.trace_id);
      if (trace && !added.has(span.trace_id)) {
        added.add(span.trace_id);
        wire.push(trace);
      }
      wire.push(span);
    }
    return wire;
  }

  /** Marks the trace events among `events` (a POST that succeeded) as sent. */
  markSent(events: readonly AriadneEvent[]): void {
    for (const event of events) {
      if (event.type !== 'trace') continue;
      this.#unsent.delete(event.trace_id);
      if (this.#sent.size >= MAX_TRACES) this.#sent.clear();
      this.#sent.add(event.trace_id);
    }
  }
}
