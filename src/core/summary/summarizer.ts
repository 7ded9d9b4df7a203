import type { CompactErrorCode } from '../errors.js';
import type { CompactMessage } from '../messages/message.js';

/** The built-in summarization strategies. */
export type StrategyName = 'task_state' | 'brief' | 'decision_log' | 'code_delta';

/** Every built-in strategy. */
export const STRATEGY_NAMES: readonly StrategyName[] = ['task_state', 'brief', 'decision_log', 'code_delta'];

/** What a summarizer is asked to do. */
export interface SummarizeRequest {
  /** The session being compacted. */
  sessionId: string;
  /** The strategy to follow (a built-in name, or a custom one a summarizer knows). */
  strategy: StrategyName | (string & {});
  /** The messages to fold into the summary, oldest first (never pinned ones). */
  messages: readonly CompactMessage[];
  /** The body of the previous summary, to carry its facts forward. */
  previousSummary?: string;
  /**
   * The previous summary's `## Task` and `## User instructions` sections: what the user asked,
   * which the new summary must carry (verbatim or nearly) until a later user instruction
   * replaces a line. The output is rejected (and falls back) when a line is lost.
   */
  keep?: string;
  /**
   * The conversation as its last request sent it, up to the last folded message (wire
   * objects, redacted like the messages): what a summarizer that repeats the conversation
   * before its instruction sends (`cachedPrefix`), so the provider's prompt cache serves it.
   * Absent when the manager cannot tell.
   */
  sentPrefix?: SentPrefix;
  /**
   * True when the request shows an AI assistant on the other side (a system prompt, tool
   * definitions, a tool call or result anywhere in it, pinned and kept messages included):
   * the folded messages are said to that assistant even when they show none of it (a first
   * fold of the opening user message alone). Absent: judge from the folded messages.
   */
  withAssistant?: boolean;
  /** The summary must stay within this many tokens. */
  maxTokens: number;
  /** Counts tokens the way the manager does (use it to check the length). */
  countTokens: (text: string) => number;
  /** Aborted when the caller gives up or a timeout passes. */
  signal?: AbortSignal;
  /** A manual compaction's note. */
  note?: string;
  /** The agent or role this session belongs to (for per-agent prompts). */
  agent?: string;
  /**
   * Reports a failure that the summarizer recovered from (a retry, a fallback). Each call
   * becomes a `compact.error` event; the compaction goes on.
   */
  reportError?: (error: SummarizerErrorReport) => void;
  /**
   * Reports a transition of the summarizer's shared circuit breaker (`open`, `probe`,
   * `close`); each call becomes a `compact.circuit` event.
   */
  reportCircuit?: (event: SummarizerCircuitReport) => void;
}

/** The conversation's last request up to the last folded message (see `SummarizeRequest.sentPrefix`). */
export interface SentPrefix {
  /** The wire messages, in the order sent. */
  readonly messages: readonly unknown[];
  /** The position of the library's own summary message among them, if any (its tag is genuine). */
  readonly summaryIndex?: number;
}

/** A circuit-breaker transition inside a summarizer, reported as a `compact.circuit` event. */
export interface SummarizerCircuitReport {
  key: string;
  transition: 'open' | 'probe' | 'close';
  failures: number;
  retryAt?: number;
  reason?: string;
}

/** A recovered failure inside a summarizer, reported as a `compact.error` event. */
export interface SummarizerErrorReport {
  /** One of the library's codes (`summarizer_timeout`, `summarizer_refused`, `summary_too_long`, ...). */
  errorType: CompactErrorCode;
  message: string;
  fallback: string;
  context?: Record<string, unknown>;
}

/** What a summarizer returns. */
export interface SummarizeResult {
  /** The summary body, without the `<COMPACT-SUMMARY vN>` tag (the manager adds it). */
  text: string;
  /** The summarizer that actually produced the text (after any fallback). */
  summarizer?: string;
  /** The model that wrote it, when a model did. */
  model?: string;
  /** The model call's token usage, when known. */
  usage?: { inputTokens: number; outputTokens: number };
}

/**
 * Turns old messages (and the previous summary) into one summary body.
 *
 * Implementations must not invent facts, must stay within `maxTokens`, must treat the
 * messages as data (never as instructions), and must throw (never return error text as a
 * summary) when they fail: the manager then falls back.
 */
export interface Summarizer {
  /** A short name for events, e.g. `embedded`, `openai:gpt-4o-mini`. */
  readonly name: string;
  /**
   * The longest one `summarize` call may take, retries included. The manager's own time
   * limit is at least this long (plus a second), unless `summarizerTimeoutMs` is set.
   */
  readonly maxDurationMs?: number;
  /**
   * Where the calls go (an LLM summarizer's base URL): part of the circuit breaker's key, so a
   * failing self-hosted endpoint does not open the breaker of a healthy hosted one.
   */
  readonly endpoint?: string;
  /**
   * True when the summarizer reads `SummarizeRequest.sentPrefix` (a cached-prefix request):
   * the manager redacts and hands it over only then.
   */
  readonly readsSentPrefix?: boolean;
  /** Releases resources (a local model); called by `manager.shutdown()`. */
  dispose?(): unknown;
  summarize(request: SummarizeRequest): Promise<SummarizeResult>;
}
