import type { AnyCompactEvent, CompactEventName, CompactEventProperties } from '../core/events/events.js';

/** Options of {@link sampleCompactionEvents}. */
export interface SampleCompactionOptions {
  /** @default 'session-abc-123' */
  sessionId?: string;
  /** @default a random 32-hex-digit id */
  traceId?: string;
  /** The caller's span the compaction nests under. @default a random 16-hex-digit id */
  parentId?: string;
  /** @default a random id */
  operationId?: string;
  /** @default 'Goal: fix the failing test. Done: reproduced the bug in parser.ts.' */
  summary?: string;
  /** Epoch milliseconds of the first event. @default Date.now() */
  start?: number;
  /** Emit a `compact.error` (summarizer timeout, fell back to embedded). @default false */
  withError?: boolean;
}

function hex(bytes: number): string {
  const values = new Uint8Array(bytes);
  crypto.getRandomValues(values);
  return Array.from(values, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Builds the events of one realistic compaction (estimate, trigger, summary, prune, two
 * archive writes, optionally an error), with consistent ids and times, for exporter tests.
 * Events carry `operationId`, as the manager's do.
 */
export function sampleCompactionEvents(options: SampleCompactionOptions = {}): AnyCompactEvent[] {
  const sessionId = options.sessionId ?? 'session-abc-123';
  const traceId = options.traceId ?? hex(16);
  const parentId = options.parentId ?? hex(8);
  const operationId = options.operationId ?? `op-${hex(4)}`;
  const start = options.start ?? Date.now();
  const summary = options.summary ?? 'Goal: fix the failing test. Done: reproduced the bug in parser.ts.';
  const event = eventMaker({ traceId, parentId, sessionId, operationId, start });
  const events = triggerEvents(event);
  if (options.withError) {
    events.push(
      event(
        'compact.error',
        4,
        2000,
        {
          errorType: 'summarizer_timeout',
          message: 'summarizer openai did not answer within 2000 ms',
          fallback: 'embedded',
          context: { attempt: 1 },
        },
        'error',
      ),
    );
  }
  events.push(...outcomeEvents(event, sessionId, summary));
  return events;
}

type MakeEvent = <N extends CompactEventName>(
  name: N,
  offset: number,
  duration: number,
  properties: CompactEventProperties[N],
  status?: 'ok' | 'error',
) => AnyCompactEvent;

/** Builds one span of the compaction, `offset` ms after its start. */
function eventMaker(ids: {
  traceId: string;
  parentId: string;
  sessionId: string;
  operationId: string;
  start: number;
}): MakeEvent {
  const { traceId, parentId, sessionId, operationId, start } = ids;
  return (name, offset, duration, properties, status = 'ok') =>
    ({
      type: 'span',
      name,
      traceId,
      spanId: hex(8),
      parentId,
      sessionId,
      operationId,
      startTime: start + offset,
      endTime: start + offset + duration,
      status,
      properties,
    }) as AnyCompactEvent;
}

/** What the sample compaction kept verbatim. */
const KEPT = { pinned: 3, recentTurns: 6, toolPairs: 4 };

/** The estimate and the decision to compact. */
function triggerEvents(event: MakeEvent): AnyCompactEvent[] {
  const policy = {
    triggerPct: 0.85,
    hardCapBuffer: 2000,
    keepRecentTurns: 6,
    keepToolIoPairs: 4,
    strategy: 'task_state',
  };
  return [
    event('compact.token_estimate', 0, 3, {
      model: 'gpt-4o',
      tEst: 112_345,
      maxTokens: 128_000,
      usagePct: 0.8777,
      usagePercent: 87.77,
      breakdown: { system: 1200, developer: 300, toolsSchema: 845, messages: 110_000 },
      messageCount: 212,
      countedFresh: 4,
    }),
    event('compact.trigger_decision', 3, 1, {
      triggered: true,
      reason: 'usage 87.8% >= trigger 85%',
      policy,
      tEst: 112_345,
      triggerTokens: 108_800,
      budget: 126_000,
      manual: false,
      kept: KEPT,
      prunedCount: 47,
    }),
  ];
}

/** The summary, the prune and the two archive writes. */
function outcomeEvents(event: MakeEvent, sessionId: string, summary: string): AnyCompactEvent[] {
  return [
    event('compact.summary_created', 5, 1240, {
      strategy: 'task_state',
      summarizer: 'openai',
      inputMessages: 47,
      inputTokens: 61_000,
      summaryTokens: 480,
      compressionRatio: 127.08,
      version: 1,
      model: 'gpt-4o-mini',
      usage: { inputTokens: 61_200, outputTokens: 480 },
      latencyMs: 1240,
      summary,
    }),
    event('compact.pruned_messages', 1246, 2, {
      prunedCount: 47,
      prunedIds: ['m-1', 'm-2', 'm-3'],
      kept: KEPT,
      tokensBefore: 112_345,
      tokensAfter: 14_210,
      version: 1,
      pinnedLabels: ['system prompt'],
    }),
    event('compact.archival', 1248, 5, {
      step: 1,
      storageAdapter: 'fs',
      artifact: 'transcript',
      location: `.compact/archive/${sessionId}/transcript-pre-compact-001.jsonl`,
    }),
    event('compact.archival', 1253, 2, {
      step: 1,
      storageAdapter: 'fs',
      artifact: 'summary',
      location: `.compact/archive/${sessionId}/summary-001.json`,
    }),
  ];
}
