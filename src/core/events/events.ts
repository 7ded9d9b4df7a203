/**
 * Trace events. Every decision the engine takes is one event; exporters (console,
 * Ariadne, OpenTelemetry, Langfuse) and archives consume the same objects.
 */
import { randomFillSync } from 'node:crypto';
import type { CompactErrorCode } from '../errors.js';

/** Token counts by part of the request. */
export interface TokenBreakdown {
  /** System prompt(s), including a separate `system`/`instructions` parameter. */
  system: number;
  /** Developer messages. */
  developer: number;
  /** Tool (function) schemas sent with the request. */
  toolsSchema: number;
  /** Every other message, including per-message overhead and reply priming. */
  messages: number;
}

/** Counts of what a compaction kept, by layer. */
export interface KeptCounts {
  /** Pinned messages (never-prune roles and protected messages). */
  pinned: number;
  /** Recent conversational turns kept verbatim. */
  recentTurns: number;
  /** Recent tool call/result groups kept verbatim. */
  toolPairs: number;
}

/** The policy figures reported with a trigger decision. */
export interface PolicySnapshot {
  triggerPct: number;
  hardCapBuffer: number;
  keepRecentTurns: number;
  keepToolIoPairs: number;
  strategy: string;
}

/** Properties of each event, by name. */
export interface CompactEventProperties {
  'compact.token_estimate': {
    model: string;
    /** Estimated tokens of the whole request. */
    tEst: number;
    /** The model's context window. */
    maxTokens: number;
    /** `tEst / maxTokens`, a fraction (the spec's name): 0.877 is 87.7% of the window. */
    usagePct: number;
    /** The same as a percentage, two decimals: 87.7. */
    usagePercent: number;
    breakdown: TokenBreakdown;
    /** How many messages were counted (the view, not the raw history). */
    messageCount: number;
    /** How many of them were counted fresh (not from the cache). */
    countedFresh: number;
    /**
     * The session's call number: 1 for its first call to this manager, counted in memory (it
     * starts again at 1 in a new process or after the session is reset or evicted). Reports
     * number calls by it, so an archive, which records compacting calls only, shows calls 18,
     * 24, 36 as they happened.
     */
    callNumber?: number;
    /** The local estimate, when reported usage calibrated `tEst` (models without an exact tokenizer). */
    tEstLocal?: number;
    /** The input tokens the provider reported for the session's previous request. */
    lastReported?: number;
    /** The per-session ratio reported/estimated that scaled what changed since. */
    calibrationRatio?: number;
  };
  'compact.trigger_decision': {
    triggered: boolean;
    reason: string;
    policy: PolicySnapshot;
    tEst: number;
    /** Token count at which compaction triggers. */
    triggerTokens: number;
    /** `max_context_tokens - hard_cap_buffer`. */
    budget: number;
    /** The size a triggered compaction reduces the request to (`targetPct` of the window, at most the budget). */
    targetTokens?: number;
    manual: boolean;
    note?: string;
    kept?: KeptCounts;
    prunedCount?: number;
    /**
     * Set when the compaction ended above its target: the tokens it ended at and what the
     * latest round alone takes (when that is over the target, no level can reach it).
     */
    overTarget?: { tokensAfter: number; latestRoundTokens: number };
  };
  'compact.summary_created': {
    strategy: string;
    summarizer: string;
    /** Messages summarized this time (not counting the previous summary). */
    inputMessages: number;
    inputTokens: number;
    summaryTokens: number;
    compressionRatio: number;
    version: number;
    /** The summarizer's own model call, when it made one. */
    model?: string;
    usage?: { inputTokens: number; outputTokens: number };
    latencyMs: number;
    summary: string;
  };
  'compact.pruned_messages': {
    prunedCount: number;
    prunedIds: string[];
    kept: KeptCounts;
    tokensBefore: number;
    tokensAfter: number;
    version: number;
    /** Labels of the pinned messages that carry one. */
    pinnedLabels: string[];
    /**
     * What the compaction does to the prompt cache: the request's prefix kept (still read from
     * the cache), the tokens rewritten (written by the next request), and the next request's
     * input priced by the manager's `pricing` without and with the compaction.
     */
    cache?: {
      tokensFreed: number;
      prefixKeptTokens: number;
      rewrittenTokens: number;
      billedNextBefore: number;
      billedNextAfter: number;
    };
  };
  'compact.error': {
    /** What went wrong, from the library's one vocabulary of snake_case codes. */
    errorType: CompactErrorCode;
    message: string;
    /** What was done instead: `embedded`, `pruning-only`, `original`, `none`, ... */
    fallback: string;
    /** Attempt number or other context. */
    context?: Record<string, unknown>;
  };
  'compact.circuit': {
    /** The breaker's key, `provider:model`, shared by every session of the process. */
    key: string;
    /** `open` (failure threshold reached or probe failed), `probe` (the one half-open call), `close`. */
    transition: 'open' | 'probe' | 'close';
    /** Consecutive failures counted. */
    failures: number;
    /** When opened: epoch ms after which one probe is let through. */
    retryAt?: number;
    /** When opened: the failure that opened it. */
    reason?: string;
  };
  'compact.reduction': {
    /** The cascade level: `clear_tool_results`, `shorten_arguments`, `summarize` or `cut_oversized`. */
    level: string;
    /** Messages the level rewrote or folded. */
    count: number;
    /** Request tokens the level saved. */
    tokensSaved: number;
    /** Archive references of the originals (pass them to the recall tool). */
    refs: string[];
    /** The summary version after this compaction. */
    version: number;
    /** Of `count`, the protected recent tool results that gave way after the summary; absent when none. */
    gaveWay?: number;
    /** Under `cut_oversized`: summary lines given up so the newest message went whole; absent when none. */
    summaryLinesGivenUp?: number;
  };
  'compact.repair': {
    /** `dropped_orphan_result`, `dropped_duplicate_result` or `answered_dangling_call`. */
    kind: string;
    /** Index of the message in the caller's history. */
    index: number;
    callId: string;
  };
  'compact.overflow_recovery': {
    /** The integration that recovered: `anthropic`, `ai-sdk`, `openai-agents`, ... */
    integration: string;
    /** HTTP status of the provider's rejection (400, 413). */
    status?: number;
    /** The provider's error message (redacted like every event). */
    providerMessage: string;
    /** The context limit the error reported, when it said. */
    reportedLimit?: number;
    /** The request size the error reported, when it said. */
    reportedTokens?: number;
    /** The rejected request as the manager counted it. */
    sentTokens: number;
    /** The window the retry was compacted against, in the manager's units. */
    retryWindow: number;
    /** The retried request as the manager counted it. */
    retryTokens: number;
  };
  'compact.unknown_model': {
    /** The model name as given. */
    model: string;
    /** The context window assumed for it. */
    assumedContextWindow: number;
    /** The known model name close enough to be a typo of it (`gtp-4o` -> `gpt-4o`); empty when none is. */
    closest: string;
    /** The warning, as printed on the console. */
    message: string;
  };
  'compact.usage': {
    /** Input tokens the provider reported for the request, cache included. */
    inputTokens: number;
    cacheReadTokens: number;
    cacheWriteTokens: number;
    uncachedTokens: number;
    outputTokens: number;
    /** Share of this request's input read from the cache (0 to 1). */
    hitShare: number;
    /** What the request cost, in input tokens at the model's base price (`pricing`). */
    billedInputEquivalent: number;
    /** The session's total so far. */
    sessionBilledInputEquivalent: number;
    sessionHitShare: number;
    /** Compactions that rewrote the session's prefix so far. */
    prefixRewrites: number;
  };
  'compact.warning': {
    /**
     * `usage_mismatch`: a provider's reported usage far from the estimate was not used.
     * `history_diverged`: the history parts from every stored state of the session (a rewind,
     * an edit of a covered message, another branch or conversation): no stored summary is sent;
     * `context` has `reason` (`shorter`, `diverged`), `divergedAt` (the first position that
     * differs from the session's previous call) and `storedVersion`.
     * `summarizer_stuck`: the session's last 3 summaries were written by the fallback, not by
     * the configured summarizer (said once per streak; `context`: `streak`, `summarizer`, `fallback`).
     * `media_estimate`: a part whose size is unknown here (a file sent by id) was counted
     * by a stated estimate; reported usage corrects it.
     * `storage_recovered`: a session store or archive that failed answers again (the failure
     * was one `compact.error` of errorType `storage_failed`); `context.affectedCalls` counts
     * the calls that went on without it meanwhile, `context.target` says which (`store`, `archive`).
     * `preparation_dead_lettered`: a queue worker's summary preparation failed every attempt
     * and was dead-lettered (`agent-compaction/queue`); the agent compacts at its trigger as
     * without a queue. `context`: `jobId`, `queue`, `attempts`, `version`, `errorType`, `error`.
     * `preparation_backlog`: the preparation queue's workers fall behind: several jobs in a row
     * were not published by their session's trigger (the agents compact at the trigger
     * meanwhile). Said once per episode; the episode ends when a prepared summary is in time
     * again. `context`: `queue`, `late` (jobs late in a row), `waitedMs` (how long the last
     * one had waited), `leadTimeMs` (the learned lead time).
     * `version_floor`: the session store held no state for a session whose summaries the
     * archive holds (a store that lost its data, seen by a process that never held the
     * session): its versions resume above the highest archived one. `context.version`.
     */
    code:
      | 'usage_mismatch'
      | 'history_diverged'
      | 'summarizer_stuck'
      | 'media_estimate'
      | 'storage_recovered'
      | 'preparation_dead_lettered'
      | 'preparation_backlog'
      | 'version_floor';
    /** What happened and what the manager does instead. */
    message: string;
    /** The figures behind it (reported and estimated tokens). */
    context?: Record<string, unknown>;
  };
  'compact.archival': {
    step: number;
    storageAdapter: string;
    /** What was written: `transcript`, `summary`. */
    artifact: string;
    /** A file path or object key. */
    location: string;
  };
}

/** The name of an event. */
export type CompactEventName = keyof CompactEventProperties;

/** Every event name, in the order a compaction emits them. */
export const COMPACT_EVENT_NAMES: readonly CompactEventName[] = [
  'compact.token_estimate',
  'compact.trigger_decision',
  'compact.summary_created',
  'compact.pruned_messages',
  'compact.reduction',
  'compact.repair',
  'compact.error',
  'compact.overflow_recovery',
  'compact.circuit',
  'compact.archival',
  'compact.unknown_model',
  'compact.usage',
  'compact.warning',
];

/**
 * One trace event. Times are epoch milliseconds; exporters convert them to the receiver's
 * format (ISO-8601 with `Z` for Ariadne, nanoseconds for OTLP).
 */
export interface CompactEvent<N extends CompactEventName = CompactEventName> {
  type: 'span';
  name: N;
  /** The session's or the caller's trace id. */
  traceId: string;
  spanId: string;
  /** The span this one nests under: the preflight span, or the caller's span. */
  parentId?: string;
  sessionId: string;
  /** One id per `preflight`/`compact` call: groups the events of one decision. */
  operationId: string;
  /** Epoch milliseconds. */
  startTime: number;
  /** Epoch milliseconds, `>= startTime`. */
  endTime: number;
  status: 'ok' | 'error';
  properties: CompactEventProperties[N];
}

/** Any event, discriminated by `name`. */
export type AnyCompactEvent = { [N in CompactEventName]: CompactEvent<N> }[CompactEventName];

/** A function that receives events in process. */
export type CompactEventListener<N extends CompactEventName = CompactEventName> = (
  event: CompactEvent<N>,
) => void;

/**
 * A destination for events (console, Ariadne, OTLP, ...). The manager never awaits an
 * exporter on the preflight path: events go through a bounded queue and `export` runs in
 * the background. An exporter must not throw; if it does, the error is caught and counted.
 */
export interface EventExporter {
  /** A short name for diagnostics, e.g. `ariadne`. */
  readonly name: string;
  /** Sends a batch. Resolves when sent or given up; never rejects on purpose. */
  export(events: readonly AnyCompactEvent[]): Promise<void>;
  /** Flushes anything buffered inside the exporter. */
  forceFlush?(): Promise<void>;
  /** Releases resources; called by `manager.shutdown()`. */
  shutdown?(): Promise<void>;
}

let spanPrefix: string | undefined;
let spanCounter = 0;

/**
 * A 16-hex-digit span id (8 bytes, as W3C trace context uses): a random per-process prefix
 * and a counter, so ids are unique without drawing random bytes on every event.
 */
export function newSpanId(): string {
  if (spanPrefix === undefined || spanCounter >= 0xffffffff) drawSpanPrefix();
  spanCounter++;
  return spanPrefix + spanCounter.toString(16).padStart(8, '0');
}

/** Draws the process's span prefix if it has none (`ready()`). */
export function primeSpanIds(): void {
  if (spanPrefix === undefined) drawSpanPrefix();
}

/**
 * From `node:crypto`, which the core loads anyway: the global `crypto` (web crypto) loads
 * modules of its own on first use (~2.5 ms of CPU, ~40 KB of heap that stays).
 */
function drawSpanPrefix(): void {
  const bytes = new Uint32Array(1);
  randomFillSync(bytes);
  spanPrefix = bytes[0]!.toString(16).padStart(8, '0');
  spanCounter = 0;
}
