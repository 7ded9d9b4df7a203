/**
 * A trace (the events of a JSONL trace file, an archive's `events.jsonl`, or a replay) read
 * back as calls and compactions: what `replay`, `report` and `status` show.
 */
import { CompactError } from '../core/errors.js';
import type { AnyCompactEvent, CompactEventProperties, KeptCounts } from '../core/events/events.js';

/** One preflight/compact call of the trace. */
export interface TraceCall {
  /** 1-based position of the call in the trace. */
  index: number;
  operationId: string;
  sessionId: string;
  /** Request tokens before the call's compaction. */
  tokens: number;
  /** Request tokens sent (after compaction when it compacted). */
  tokensSent: number;
  maxTokens?: number;
  triggerTokens?: number;
  targetTokens?: number;
  budget?: number;
  triggered: boolean;
  /** What the provider reported for this call's request (`compact.usage`), when recorded. */
  usage?: TraceUsage;
}

/** A call's reported usage under prompt caching. */
export interface TraceUsage {
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  hitShare: number;
  billedInputEquivalent: number;
}

/** The session's cost, from its last reported usage. */
export interface TraceCost {
  requests: number;
  hitShare: number;
  billedInputEquivalent: number;
  prefixRewrites: number;
}

/** One level of the cascade in one compaction. */
export interface TraceLevel {
  level: string;
  count: number;
  tokensSaved: number;
  refs: string[];
}

/** A failure inside a compaction (`compact.error`) and what was done instead. */
export interface TraceError {
  errorType: string;
  message: string;
  fallback: string;
}

/** One compaction: a call whose decision triggered. */
export interface TraceCompaction {
  /** 1-based position among the trace's compactions. */
  number: number;
  call: TraceCall;
  reason: string;
  manual: boolean;
  note?: string;
  tokensBefore: number;
  tokensAfter: number;
  levels: TraceLevel[];
  kept?: KeptCounts;
  prunedCount?: number;
  version?: number;
  summarizer?: string;
  strategy?: string;
  summary?: string;
  summaryTokens?: number;
  /** Messages folded into the summary this time. */
  summarizedMessages?: number;
  errors: TraceError[];
  /** The last fallback taken (`embedded`, `pruning-only`, ...), or `none`. */
  fallback: string;
}

/** A trace read back. */
export interface TraceModel {
  model?: string;
  sessionIds: string[];
  calls: TraceCall[];
  compactions: TraceCompaction[];
  /** Errors of calls that did not compact, and warnings. */
  otherErrors: TraceError[];
  /** How many events were read. */
  eventCount: number;
  /** Totals of the reported usage (`compact.usage`), when any was recorded. */
  cost?: TraceCost;
}

const LEVEL_NAMES: Readonly<Record<string, string>> = Object.freeze({
  clear_tool_results: 'cleared',
  shorten_arguments: 'shortened',
  summarize: 'summarized',
  cut_oversized: 'cut',
});

/** `clear_tool_results` -> `cleared`, and so on: the cascade levels as people say them. */
export function levelLabel(level: string): string {
  return LEVEL_NAMES[level] ?? level;
}

function isEvent(value: unknown): value is AnyCompactEvent {
  if (value === null || typeof value !== 'object') return false;
  const event = value as Record<string, unknown>;
  return (
    typeof event.name === 'string' &&
    event.name.startsWith('compact.') &&
    typeof event.properties === 'object'
  );
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

type Props<N extends keyof CompactEventProperties> = CompactEventProperties[N];
const propsOf = <N extends keyof CompactEventProperties>(event: AnyCompactEvent, name: N) =>
  event.name === name ? (event.properties as Props<N>) : undefined;

interface Operation {
  id: string;
  sessionId: string;
  events: AnyCompactEvent[];
}

function groupByOperation(events: readonly AnyCompactEvent[]): Operation[] {
  const operations = new Map<string, Operation>();
  let orphan = 0;
  for (const event of events) {
    const id =
      typeof event.operationId === 'string' && event.operationId !== ''
        ? event.operationId
        : `orphan-${orphan++}`;
    let operation = operations.get(id);
    if (!operation) {
      operation = { id, sessionId: String(event.sessionId), events: [] };
      operations.set(id, operation);
    }
    operation.events.push(event);
  }
  return [...operations.values()];
}

function errorsOf(events: readonly AnyCompactEvent[]): TraceError[] {
  const errors: TraceError[] = [];
  for (const event of events) {
    const error = propsOf(event, 'compact.error');
    if (error)
      errors.push({
        errorType: String(error.errorType),
        message: String(error.message),
        fallback: String(error.fallback),
      });
  }
  return errors;
}

function compactionOf(call: TraceCall, events: readonly AnyCompactEvent[], number: number): TraceCompaction {
  const find = <N extends keyof CompactEventProperties>(name: N) => {
    for (const event of events) {
      const found = propsOf(event, name);
      if (found) return found;
    }
    return undefined;
  };
  const decision = find('compact.trigger_decision');
  const pruned = find('compact.pruned_messages');
  const summary = find('compact.summary_created');
  const levels: TraceLevel[] = [];
  for (const event of events) {
    const level = propsOf(event, 'compact.reduction');
    if (level)
      levels.push({
        level: String(level.level),
        count: Number(level.count) || 0,
        tokensSaved: Number(level.tokensSaved) || 0,
        refs: Array.isArray(level.refs) ? level.refs.map(String) : [],
      });
  }
  const errors = errorsOf(events);
  const tokensAfter = pruned?.tokensAfter ?? call.tokensSent;
  const compaction: TraceCompaction = {
    number,
    call,
    reason: String(decision?.reason ?? 'unknown'),
    manual: decision?.manual === true,
    tokensBefore: pruned?.tokensBefore ?? call.tokens,
    tokensAfter,
    levels,
    errors,
    fallback: errors.at(-1)?.fallback ?? 'none',
  };
  if (decision?.note !== undefined) compaction.note = String(decision.note);
  const kept = pruned?.kept ?? decision?.kept;
  if (kept) compaction.kept = kept;
  if (pruned) compaction.prunedCount = pruned.prunedCount;
  const version = pruned?.version ?? summary?.version ?? findVersion(events);
  if (version !== undefined) compaction.version = version;
  if (summary) {
    compaction.summarizer = String(summary.summarizer);
    compaction.strategy = String(summary.strategy);
    compaction.summary = String(summary.summary);
    compaction.summaryTokens = summary.summaryTokens;
    compaction.summarizedMessages = summary.inputMessages;
  }
  return compaction;
}

function findVersion(events: readonly AnyCompactEvent[]): number | undefined {
  for (const event of events) {
    const value = (event.properties as { version?: unknown }).version;
    if (typeof value === 'number') return value;
  }
  return undefined;
}

/** Reads events back as calls (one per operation with a decision) and compactions. */
export function buildTraceModel(events: readonly AnyCompactEvent[]): TraceModel {
  const calls: TraceCall[] = [];
  const compactions: TraceCompaction[] = [];
  const otherErrors: TraceError[] = [];
  const sessionIds = new Set<string>();
  let model: string | undefined;
  const lastCallOf = new Map<string, TraceCall>();
  let cost: TraceCost | undefined;
  let requests = 0;
  for (const operation of groupByOperation(events)) {
    const usage = operation.events.map((e) => propsOf(e, 'compact.usage')).find(Boolean);
    if (usage) {
      // The usage of a response belongs to the session's request just before it.
      const call = lastCallOf.get(operation.sessionId);
      if (call) call.usage = traceUsage(usage);
      requests++;
      cost = {
        requests,
        hitShare: Number(usage.sessionHitShare) || 0,
        billedInputEquivalent: Number(usage.sessionBilledInputEquivalent) || 0,
        prefixRewrites: Number(usage.prefixRewrites) || 0,
      };
      continue;
    }
    const estimate = operation.events.map((e) => propsOf(e, 'compact.token_estimate')).find(Boolean);
    const decision = operation.events.map((e) => propsOf(e, 'compact.trigger_decision')).find(Boolean);
    if (!estimate && !decision) {
      otherErrors.push(...errorsOf(operation.events));
      continue;
    }
    sessionIds.add(operation.sessionId);
    if (estimate?.model) model = String(estimate.model);
    const tokens = Number(estimate?.tEst ?? decision?.tEst) || 0;
    const pruned = operation.events.map((e) => propsOf(e, 'compact.pruned_messages')).find(Boolean);
    const call: TraceCall = {
      index: calls.length + 1,
      operationId: operation.id,
      sessionId: operation.sessionId,
      tokens,
      tokensSent: pruned?.tokensAfter ?? tokens,
      triggered: decision?.triggered === true,
    };
    if (estimate?.maxTokens !== undefined) call.maxTokens = Number(estimate.maxTokens);
    if (decision?.triggerTokens !== undefined) call.triggerTokens = Number(decision.triggerTokens);
    if (decision?.targetTokens !== undefined) call.targetTokens = Number(decision.targetTokens);
    if (decision?.budget !== undefined) call.budget = Number(decision.budget);
    calls.push(call);
    lastCallOf.set(operation.sessionId, call);
    if (call.triggered) compactions.push(compactionOf(call, operation.events, compactions.length + 1));
    else otherErrors.push(...errorsOf(operation.events));
  }
  const result: TraceModel = {
    sessionIds: [...sessionIds],
    calls,
    compactions,
    otherErrors,
    eventCount: events.length,
  };
  if (model !== undefined) result.model = model;
  if (cost !== undefined) result.cost = cost;
  return result;
}

function traceUsage(usage: Props<'compact.usage'>): TraceUsage {
  return {
    inputTokens: Number(usage.inputTokens) || 0,
    cacheReadTokens: Number(usage.cacheReadTokens) || 0,
    cacheWriteTokens: Number(usage.cacheWriteTokens) || 0,
    hitShare: Number(usage.hitShare) || 0,
    billedInputEquivalent: Number(usage.billedInputEquivalent) || 0,
  };
}
