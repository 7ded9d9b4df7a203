/**
 * A trace (the events of a JSONL trace file, an archive's `events.jsonl`, or a replay) read
 * back as calls and compactions: what `replay`, `report` and `status` show.
 */
import { CompactError } from '../core/errors.js';
import type { AnyCompactEvent } from '../core/events/events.js';
import { compactionOf, errorsOf, type Fields, firstFields } from './read-compaction.js';
import { isFields, TraceFieldReader } from './trace-fields.js';
import type { TraceCall, TraceCost, TraceError, TraceModel, TraceUsage } from './trace-types.js';

export type {
  TraceCall,
  TraceCompaction,
  TraceCost,
  TraceError,
  TraceLevel,
  TraceModel,
  TraceUsage,
} from './trace-types.js';

const LEVEL_NAMES: Readonly<Record<string, string>> = Object.freeze({
  clear_tool_results: 'cleared',
  shorten_arguments: 'shortened',
  summarize: 'summarized',
  cut_oversized: 'cut',
});

/**
 * The tokens a level freed, as shown: `1,582`; a level that added tokens (a first summary
 * longer than the little it replaced) reads `none (added 334)`, never a negative "freed".
 */
export function freedText(tokens: number): string {
  const n = (value: number) => Math.round(value).toLocaleString('en-US');
  return tokens < 0 ? `none (added ${n(-tokens)})` : n(tokens);
}

/** `clear_tool_results` -> `cleared`, and so on: the cascade levels as people say them. */
export function levelLabel(level: string): string {
  return LEVEL_NAMES[level] ?? level;
}

function isEvent(value: unknown): value is AnyCompactEvent {
  if (value === null || typeof value !== 'object') return false;
  const event = value as Record<string, unknown>;
  return typeof event.name === 'string' && event.name.startsWith('compact.') && isFields(event.properties);
}

/**
 * Parses a JSONL trace: one event per line (blank lines skipped). A broken line is an
 * `invalid_messages` error naming its line; a file without a single compaction event is one too.
 */
export function parseTrace(text: string, source = 'trace'): AnyCompactEvent[] {
  if (text.trim() === '') throw new CompactError('invalid_messages', `${source} is empty`);
  const events: AnyCompactEvent[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new CompactError(
        'invalid_messages',
        `${source} line ${i + 1}: not valid JSON (${(error as Error).message})`,
      );
    }
    if (!isEvent(value)) {
      throw new CompactError(
        'invalid_messages',
        `${source} line ${i + 1}: not a compaction event (expected {"name": "compact.*", "properties": {...}})`,
      );
    }
    events.push(value);
  }
  return events;
}

interface Operation {
  id: string;
  sessionId: string;
  events: AnyCompactEvent[];
}

/**
 * Groups the events by `operationId`. A trace written before events carried it groups a
 * session's events from each `compact.token_estimate` (a call starts with its estimate), or
 * from a `compact.trigger_decision` when the group already holds one.
 */
function groupByOperation(events: readonly AnyCompactEvent[], read: TraceFieldReader): Operation[] {
  const operations = new Map<string, Operation>();
  const orphanOf = new Map<string, Operation>();
  let orphan = 0;
  for (const event of events) {
    let id: string;
    if (typeof event.operationId === 'string' && event.operationId !== '') id = event.operationId;
    else {
      const session = read.string(event as unknown as Fields, 'sessionId', 'event') ?? '?';
      const current = orphanOf.get(session);
      const starts =
        event.name === 'compact.token_estimate' ||
        event.name === 'compact.usage' ||
        (event.name === 'compact.trigger_decision' && current?.events.some((e) => e.name === event.name));
      if (current === undefined || starts) {
        id = `orphan-${orphan++}`;
        orphanOf.set(session, { id, sessionId: session, events: [] });
        operations.set(id, orphanOf.get(session)!);
      } else id = current.id;
    }
    let operation = operations.get(id);
    if (!operation) {
      const sessionId = read.string(event as unknown as Fields, 'sessionId', 'event') ?? '?';
      operation = { id, sessionId, events: [] };
      operations.set(id, operation);
    }
    operation.events.push(event);
  }
  return [...operations.values()];
}

/** One call of the trace from its estimate, decision and outcome events. */
function callOf(
  operation: Operation,
  estimate: Fields | undefined,
  decision: Fields | undefined,
  read: TraceFieldReader,
): TraceCall & { callNumber?: number } {
  const ESTIMATE = 'compact.token_estimate';
  const DECISION = 'compact.trigger_decision';
  const pruned = firstFields(operation.events, 'compact.pruned_messages');
  const tokens = read.number(estimate, 'tEst', ESTIMATE) ?? read.number(decision, 'tEst', DECISION) ?? 0;
  const call: TraceCall & { callNumber?: number } = {
    index: 0,
    operationId: operation.id,
    sessionId: operation.sessionId,
    tokens,
    tokensSent: read.number(pruned, 'tokensAfter', 'compact.pruned_messages') ?? tokens,
    triggered: read.boolean(decision, 'triggered', DECISION) === true,
  };
  const callNumber = read.number(estimate, 'callNumber', ESTIMATE);
  if (callNumber !== undefined) call.callNumber = callNumber;
  const maxTokens = read.number(estimate, 'maxTokens', ESTIMATE);
  if (maxTokens !== undefined) call.maxTokens = maxTokens;
  const triggerTokens = read.number(decision, 'triggerTokens', DECISION);
  if (triggerTokens !== undefined) call.triggerTokens = triggerTokens;
  const targetTokens = read.number(decision, 'targetTokens', DECISION);
  if (targetTokens !== undefined) call.targetTokens = targetTokens;
  const budget = read.number(decision, 'budget', DECISION);
  if (budget !== undefined) call.budget = budget;
  return call;
}

/**
 * Numbers the calls: by the session's own call numbers (`callNumber` of each estimate) when
 * the trace is one session's and they rise, so a trace of compacting calls only (an archive)
 * shows calls 18, 24, 36 as the run made them; otherwise by position in the trace.
 */
function numberCalls(calls: readonly (TraceCall & { callNumber?: number })[]): void {
  let own = calls.length > 0 && new Set(calls.map((call) => call.sessionId)).size === 1;
  let previous = 0;
  for (const call of calls) {
    const number = call.callNumber;
    if (number === undefined || !Number.isInteger(number) || number <= previous) {
      own = false;
      break;
    }
    previous = number;
  }
  calls.forEach((call, position) => {
    call.index = own ? call.callNumber! : position + 1;
    delete call.callNumber;
  });
}

function usageOf(usage: Fields, read: TraceFieldReader): TraceUsage {
  const at = 'compact.usage';
  return {
    inputTokens: read.number(usage, 'inputTokens', at) ?? 0,
    cacheReadTokens: read.number(usage, 'cacheReadTokens', at) ?? 0,
    cacheWriteTokens: read.number(usage, 'cacheWriteTokens', at) ?? 0,
    hitShare: read.number(usage, 'hitShare', at) ?? 0,
    billedInputEquivalent: read.number(usage, 'billedInputEquivalent', at) ?? 0,
  };
}

/**
 * Reads events back as calls (one per operation with a decision) and compactions. Every field
 * is checked before use (see `TraceFieldReader`); what was skipped is listed in `notes`.
 */
export function buildTraceModel(events: readonly AnyCompactEvent[]): TraceModel {
  const read = new TraceFieldReader();
  const calls: (TraceCall & { callNumber?: number })[] = [];
  const triggered: { call: TraceCall; events: AnyCompactEvent[] }[] = [];
  const otherErrors: TraceError[] = [];
  const sessionIds = new Set<string>();
  let model: string | undefined;
  const lastCallOf = new Map<string, TraceCall>();
  const costOf = new Map<string, TraceCost & { sessionId: string }>();
  for (const operation of groupByOperation(events, read)) {
    const usage = firstFields(operation.events, 'compact.usage');
    if (usage) {
      // The usage of a response belongs to the session's request just before it.
      const call = lastCallOf.get(operation.sessionId);
      if (call) call.usage = usageOf(usage, read);
      // Each session's usage carries its own running totals: a trace of several sessions
      // keeps them apart (one session's hit share is not the trace's).
      costOf.set(operation.sessionId, {
        sessionId: operation.sessionId,
        requests: (costOf.get(operation.sessionId)?.requests ?? 0) + 1,
        hitShare: read.number(usage, 'sessionHitShare', 'compact.usage') ?? 0,
        billedInputEquivalent: read.number(usage, 'sessionBilledInputEquivalent', 'compact.usage') ?? 0,
        prefixRewrites: read.number(usage, 'prefixRewrites', 'compact.usage') ?? 0,
      });
      continue;
    }
    const estimate = firstFields(operation.events, 'compact.token_estimate');
    const decision = firstFields(operation.events, 'compact.trigger_decision');
    if (!estimate && !decision) {
      otherErrors.push(...errorsOf(operation.events, read));
      continue;
    }
    sessionIds.add(operation.sessionId);
    model = read.string(estimate, 'model', 'compact.token_estimate') ?? model;
    const call = callOf(operation, estimate, decision, read);
    calls.push(call);
    lastCallOf.set(operation.sessionId, call);
    if (call.triggered) triggered.push({ call, events: operation.events });
    else otherErrors.push(...errorsOf(operation.events, read));
  }
  numberCalls(calls);
  const compactions = triggered.map((item, i) => compactionOf(item.call, item.events, i + 1, read));
  const result: TraceModel = {
    sessionIds: [...sessionIds],
    calls,
    compactions,
    otherErrors,
    eventCount: events.length,
    notes: read.notes(),
    sessionCosts: [...costOf.values()],
  };
  if (model !== undefined) result.model = model;
  if (costOf.size === 1) {
    const { sessionId: _, ...cost } = result.sessionCosts[0]!;
    result.cost = cost;
  }
  return result;
}
