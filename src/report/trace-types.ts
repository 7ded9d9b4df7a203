/** The shapes of a trace read back (see trace-model.ts). */
import type { KeptCounts } from '../core/events/events.js';

/** One preflight/compact call of the trace. */
export interface TraceCall {
  /**
   * The call's number: the session's own call number when the trace is one session's and its
   * events carry it (`compact.token_estimate`'s `callNumber`), else the 1-based position in the trace.
   */
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
  /** Totals of the reported usage (`compact.usage`), when one session's was recorded. */
  cost?: TraceCost;
  /** The same totals per session (in order of first usage), one entry per session with usage. */
  sessionCosts: (TraceCost & { sessionId: string })[];
  /** Fields skipped because they were not of their type (a trace may come from elsewhere). */
  notes: string[];
}
