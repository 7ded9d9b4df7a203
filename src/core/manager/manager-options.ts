/**
 * Options and results of {@link CompactManager}: what callers pass and get back.
 */

import type { StorageAdapter } from '../archive/storage-adapter.js';
import type { CachePrice } from '../counting/session-cost.js';
import type { TokenCounter } from '../counting/token-counter.js';
import type { EventExporter, KeptCounts, TokenBreakdown } from '../events/events.js';
import type { ExportQueueOptions } from '../events/export-queue.js';
import type { MessageFormat } from '../messages/message.js';
import type { CompactPolicy } from '../policy.js';
import type { PreparationQueue } from '../queues/preparation-queue.js';
import type { Redactor, RedactorOptions } from '../redaction/redactor.js';
import type { SessionStore } from '../session/session-store.js';
import type { Summarizer } from '../summary/summarizer.js';

/** The cascade levels, cheapest and most faithful first. */
export type CascadeLevel = 'clear_tool_results' | 'shorten_arguments' | 'summarize' | 'cut_oversized';

/** What one level did. */
export interface LevelReport {
  level: CascadeLevel;
  /** Messages rewritten (or folded into the summary). */
  count: number;
  /** Request tokens saved by the level. */
  tokensSaved: number;
  /** Archive references of the originals. */
  refs: string[];
  /**
   * Of `count`, the recent tool results that `clearKeepRecent` protected and that gave way after
   * the summary (cleared, or shortened head and tail under `cut_oversized`); absent when none.
   */
  gaveWay?: number;
  /**
   * Under `cut_oversized`: the summary's least valued lines it gave up so that the newest
   * message went whole instead of cut; absent when none.
   */
  summaryLinesGivenUp?: number;
}

/** One repair made to the input. */
export interface InputRepair {
  kind: 'dropped_orphan_result' | 'dropped_duplicate_result' | 'answered_dangling_call';
  index: number;
  callId: string;
}

/** The default of {@link CompactManagerOptions.cacheMaxBytes}: 256 MiB. */
export const DEFAULT_CACHE_MAX_BYTES = 268_435_456;

/** The context window assumed when neither the options nor the model table give one. */
export const DEFAULT_MAX_CONTEXT_TOKENS = 128_000;

/** The smallest context window accepted, in code and in config files alike. */
export const MIN_CONTEXT_TOKENS = 256;
/** The model assumed when none is given. */
export const DEFAULT_MODEL = 'gpt-4o';
/** How long a summarizer may take before the manager falls back. */
export const DEFAULT_SUMMARIZER_TIMEOUT_MS = 30_000;

/** Options of {@link CompactManager}. Config files use the same keys in snake_case. */
export interface CompactManagerOptions {
  /**
   * The agent's model: picks the tokenizer and, when `maxContextTokens` is not set, the window.
   * @default 'gpt-4o'
   */
  model?: string;
  /**
   * The model's context window in tokens.
   * @default the model's known window, else 128_000
   */
  maxContextTokens?: number;
  /** Compaction policy; every field defaults as in {@link DEFAULT_POLICY}. */
  policy?: Partial<CompactPolicy>;
  /**
   * Writes summaries.
   * @default new EmbeddedSummarizer() (offline, deterministic)
   */
  summarizer?: Summarizer;
  /**
   * Total time budget of the summarization in one preflight: the configured summarizer's
   * attempts and the embedded fallback share it (a tenth, at most 3 s, is kept for the
   * fallback, which gets at least 1 s in any case); past it the manager falls back to pruning only.
   * @default 30_000
   */
  summarizerTimeoutMs?: number;
  /**
   * Counts tokens.
   * @default the model's tokenizer (exact for OpenAI models, an estimate with margin otherwise)
   */
  tokenCounter?: TokenCounter;
  /**
   * Holds per-session state (summary, what it covers).
   * @default new MemorySessionStore()
   */
  store?: SessionStore;
  /** Archives transcripts, summaries and events. @default none */
  storage?: StorageAdapter;
  /**
   * Block pruning while the archive cannot be written: a compaction whose transcript or
   * originals fail to archive throws `storage_failed` (naming the cause) instead of pruning.
   * For callers that persist the compacted view and rely on recall. Off by default: a failed
   * archive write is a `compact.error` and the compaction goes on (its summary then names no
   * archive ref).
   * @default false
   */
  requireArchive?: boolean;
  /**
   * Time limit of one archive write (transcript, original, summary or event line), in ms: a
   * `storage` write not settled by then (a hung adapter or mount) counts as failed
   * (`storage_failed`, once per outage; with `requireArchive`, nothing is pruned), so the call
   * goes on and `flush()`/`shutdown()` return. The write's signal (`ArchiveWriteOptions`) is
   * aborted then: the shipped adapters stop it (fs puts no file in place, S3 aborts the request,
   * memory stores nothing); an adapter that ignores the signal may land it later, under its own name.
   * @default 30000
   */
  archiveTimeoutMs?: number;
  /**
   * Secrets that sign the summaries this manager writes (the first signs, every one
   * verifies: list the old key after the new one while rotating). A persisted view handed back
   * resumes its summary only when the mark verifies for its session, after a restart or in
   * another process too, without a shared store. Default: the `COMPACT_SUMMARY_KEY`
   * environment variable (comma-separated), else a key generated once into
   * `COMPACT_SUMMARY_KEY_FILE` (default `~/.agent-compaction/summary-key`, mode 0600). Give
   * every process of a deployment the same key. At least 16 characters each.
   */
  summaryKeys?: string | readonly string[];
  /**
   * Price multipliers of the models' base input price, by model-name prefix (the longest
   * prefix wins), merged over the defaults: `{ 'claude': { cacheRead: 0.1, cacheWrite: 1.25,
   * output: 5 } }`. They price `costSnapshot` and the `compact.usage` events.
   * @default DEFAULT_CACHE_PRICES
   */
  pricing?: Record<string, CachePrice>;
  /**
   * The clock, in epoch ms: how the manager tells an idle gap past `policy.cacheLifetimeMs`.
   * Inject a fake one in tests.
   * @default Date.now
   */
  clock?: () => number;
  /** Receive events in the background through a bounded queue. @default [] */
  exporters?: EventExporter[];
  /** Options of the exporters' queue. */
  exportQueue?: ExportQueueOptions;
  /**
   * Redaction of everything that leaves the process (events, archives). `false` disables it
   * and emits a warning event once.
   * @default true (the default patterns)
   */
  redaction?: boolean | RedactorOptions | Redactor;
  /** Strategy names a custom summarizer understands, besides the built-in four. */
  customStrategies?: string[];
  /**
   * Redact the messages and the previous summary handed to the summarizer, and the summary
   * it writes, so the summary the model sees holds no secret from a pruned message. Turning
   * it off keeps secrets in summaries (an embedded summary then may quote them verbatim) in
   * exchange for summaries that can repeat a credential the agent still needs.
   * @default true
   */
  redactSummarizerInput?: boolean;
  /**
   * Prepare summaries off the critical path: once a session's request passes
   * `policy.prepareAtPct`, the older part of its view is summarized in the background, and
   * the trigger swaps that summary in (when it still covers a prefix of the history) instead
   * of waiting for the summarizer. Off by default: the fold point is then chosen at the
   * soft threshold rather than at the trigger, and a preparation the session never needs
   * (it ended, or its history was edited) costs a summarizer call. Turn it on with an LLM
   * summarizer, where a trigger otherwise blocks the agent for seconds.
   * `shutdown()` aborts the preparations still running. With it (or a `preparationQueue`),
   * `policy.costTrigger` defaults to false: the session compacts where its preparation is
   * aimed, not at the cost trigger's earlier point; set it (or the `cost` preset) for both.
   * @default false
   */
  background?: boolean;
  /**
   * Prepare summaries on a job queue instead of in this process (implies `background`):
   * past `policy.prepareAtPct` one job per session and summary version is enqueued (once
   * across every process), a worker summarizes it and publishes the summary in the `store`
   * (which must be the store the workers write: Redis), and the trigger swaps it in when it
   * fits, waits for one a worker is running, else compacts as without a queue (it never
   * waits for a job still queued). The job carries the
   * folded messages redacted. `agent-compaction/queue` has the BullMQ queue and its worker.
   * @default undefined
   */
  preparationQueue?: PreparationQueue;
  /**
   * Where queued preparations (`preparationQueue`) start. `learned`: a lead time ahead of the trigger, from
   * what this manager measures: how long preparations take to be ready (with a queue, enqueue
   * to published: the p90 of recent jobs, a job still not published at its trigger counting
   * as later) and how much and how fast each session grows per call; `policy.prepareAtPct`
   * until both are known. A session that would reach its trigger before a preparation could
   * be ready enqueues none. `fixed`: always at `policy.prepareAtPct`. Preparations in this
   * process (`background: true` without a queue) start at `policy.prepareAtPct` (the trigger
   * waits for one still running).
   * @default 'learned'
   */
  preparationLead?: 'learned' | 'fixed';
  /**
   * Agents that keep their own compacted view of a shared history (a planner and a code
   * executor reading one conversation), by the name passed as `agent` to `preflight`. Each
   * gets its own summary, state and, when given, summarizer (its own prompt and model) and
   * policy. An `agent` not listed here shares the session's state (the name only reaches
   * the summarizer's prompt).
   * @default {}
   */
  agents?: Record<string, AgentCompactorOptions>;
  /**
   * The session lock a triggered compaction holds while it summarizes and writes (renewed
   * while it runs, its fencing token on the write): processes sharing a store compact once
   * per trigger, the others wait and use the result, and a crashed holder blocks them no
   * longer than `ttlMs` (default 10_000). Without the lock the write is still a
   * compare-and-set, so versions only go up, but two processes may both summarize.
   * @default on for shared stores, off for a `MemorySessionStore` (one process; the
   *   manager already runs a session's compactions one at a time)
   */
  sessionLock?: boolean | { ttlMs?: number };
  /**
   * Time limit of one call's waits on the session store, all its operations together (reads,
   * writes, the lock, its renewals and release); `shutdown()` waits on the store no longer
   * either. A store operation that fails or outlasts what is left is a store fault: unless
   * `failOnStorageError` is set, the call goes on from this process's copy of the session's
   * state (or from the history alone), one `compact.error` (`storage_failed`) is emitted when
   * the outage starts and one `compact.warning` (`storage_recovered`, with the number of calls
   * affected) when the store answers again, and the writes missed are written then (a
   * compare-and-set: a newer state written by another process meanwhile wins).
   * @default 500
   */
  storeTimeoutMs?: number;
  /**
   * Cap, in bytes (approximate), of what the manager keeps in memory per session between
   * calls (the indexed history and its view): past it, the least recently used sessions are
   * forgotten (their next call indexes the history again; stored state is untouched). Each
   * indexed message counts 400 bytes plus 4 per character of its text, arguments and
   * results. `endSession(id)` frees one session at once; `shutdown()` frees everything. The
   * content cache shared by the sessions (a message parsed once, by content) is capped at the
   * same figure, oldest first (`cacheStatus().cachedMessageBytes`).
   * @default 268_435_456 (256 MiB)
   */
  cacheMaxBytes?: number;
  /**
   * Throw `storage_failed` when the session store fails, as before fail-open existed (no
   * time limit is applied then either).
   * @default false
   */
  failOnStorageError?: boolean;
}

/** One agent's compactor (see {@link CompactManagerOptions.agents}). */
export interface AgentCompactorOptions {
  /** Writes this agent's summaries. @default the manager's summarizer */
  summarizer?: Summarizer;
  /** Overrides of the manager's policy for this agent. */
  policy?: Partial<CompactPolicy>;
  /** Time limit of one of this agent's summarizer calls. @default as for the manager */
  summarizerTimeoutMs?: number;
}

/** Per-call options of {@link CompactManager.preflight} and {@link CompactManager.compact}. */
export interface PreflightOptions {
  /**
   * Tool schemas sent with the request (counted in the budget). A structured-output schema the
   * request sends (`response_format`, `text.format`) belongs here too, as
   * `{response_format: schema}`: an entry without a function `name` is counted as its JSON.
   */
  tools?: readonly unknown[];
  /** A system prompt sent apart from the messages (Anthropic `system`, Agents `instructions`). */
  system?: string | readonly unknown[];
  /** The messages' format. @default detected */
  format?: MessageFormat;
  /** The caller's trace id. @default the session id */
  traceId?: string;
  /** The caller's span, under which the events nest. */
  parentSpanId?: string;
  /**
   * The agent or role making the call. An agent listed in `CompactManagerOptions.agents`
   * has its own compacted view and summary; any other name only reaches the summarizer (for
   * per-agent prompts) and shares the session's state.
   */
  agent?: string;
  /** Aborts a running summarization. */
  signal?: AbortSignal;
  /** Overrides of the policy for this call. */
  policy?: Partial<CompactPolicy>;
  /**
   * Tokens the call asks for its reply: the request's `max_tokens`, `max_completion_tokens` or
   * `max_output_tokens` (the AI SDK's `maxOutputTokens`, an agent's `modelSettings.maxTokens`).
   * Providers refuse a prompt that passes the window together with it, so the call keeps it
   * free, with a hundredth of the window more for the provider's own count of its wire format:
   * the budget is `maxContextTokens - max(hardCapBuffer, replyTokens + maxContextTokens / 100)`.
   * A figure not below the window is ignored (the provider refuses such a request whatever its
   * prompt). The SDK integrations and the proxy pass it from the request.
   */
  replyTokens?: number;
  /**
   * The context window for this call only (overflow recovery compacts against the limit a
   * provider's "too long" error reports).
   * @default the manager's `maxContextTokens`
   */
  maxContextTokens?: number;
}

/**
 * Input tokens a provider reported for one request of a session (see
 * {@link CompactManager.recordUsage}). Fields follow the providers' usage objects.
 */
export interface ReportedUsage {
  /** Input tokens billed (OpenAI `prompt_tokens` / `input_tokens`, Anthropic `input_tokens`, AI SDK `inputTokens`). */
  inputTokens: number;
  /** Anthropic `cache_read_input_tokens` (beside `inputTokens`; counted in the request's size). */
  cacheReadInputTokens?: number;
  /** Anthropic `cache_creation_input_tokens` (beside `inputTokens`; counted in the request's size). */
  cacheCreationInputTokens?: number;
  /**
   * OpenAI cached tokens, *included* in `inputTokens` (Chat `prompt_tokens_details.cached_tokens`,
   * Responses `input_tokens_details.cached_tokens`, AI SDK `inputTokens.cacheRead`).
   */
  cachedInputTokens?: number;
  /** Output tokens (priced in `costSnapshot`). */
  outputTokens?: number;
}

/** Options of {@link CompactManager.compact}. */
export interface CompactOptions extends PreflightOptions {
  /** Compact even below the threshold. */
  force?: boolean;
  /** A note recorded with the events (manual compactions). */
  note?: string;
}

/** The result of {@link CompactManager.estimate}. */
export interface TokenEstimate {
  model: string;
  /** Tokens of the whole request. */
  total: number;
  breakdown: TokenBreakdown;
  maxContextTokens: number;
  /** `total / maxContextTokens`, a fraction (0.877). */
  usagePct: number;
  /** The same as a percentage, two decimals (87.7). */
  usagePercent: number;
  /** The counter's name (e.g. `o200k_base`). */
  tokenizer: string;
  /** False when counts are estimates: a model without a public tokenizer, or any image, document, audio or encrypted part (estimated from its size). */
  exact: boolean;
}

/** The summary a compaction produced. */
export interface CompactionSummary {
  /** The whole summary message text, tags included. */
  text: string;
  version: number;
  /** Tokens of the summary message as sent (tags and message overhead included). */
  tokens: number;
  /** Which summarizer wrote it: the configured one or a fallback. */
  summarizer: string;
  /** Set when the configured summarizer failed: `embedded` or `pruning-only`. */
  fallback?: string /**
   * Set on a local summary: made while the session store could not take it (an outage, or a
   * store that kept changing under the compaction). It is sent as `<COMPACT-LOCAL-SUMMARY>`,
   * claims no version (`version` is the highest version known, the one it extends) and carries
   * no mark, so no version ever gets two texts across a fleet; handed back in a persisted view
   * it is content. Once the store answers, the session goes on from the store's state.
   */;
  local?: true;
}

/** The result of {@link CompactManager.compact}. */
export interface CompactionResult<M = unknown> {
  /** The messages to send, in the caller's format. */
  messages: M[];
  /** True when this call compacted. */
  applied: boolean;
  /** Why (not) compacted. */
  reason: string;
  /**
   * Tokens of the request before this call's compaction (the view as it stood). On the first
   * call of a long history nobody had counted, decided from a bound under the trigger, the
   * bound (never below the exact count; see docs/how-it-works.md, "token counts").
   */
  tokensBefore: number;
  /** Tokens of the request that `messages` make. */
  tokensAfter: number;
  /** `maxContextTokens - hardCapBuffer`. */
  budget: number;
  /** The session's current summary, if any. */
  summary?: CompactionSummary;
  kept: KeptCounts;
  /** Messages folded into the summary (or dropped) by this call. */
  prunedCount: number;
  /** The session's compaction count (the summary's `vN`). */
  version: number;
  format: MessageFormat;
  /**
   * The cascade levels this call ran, in order, with what each did and the tokens it saved
   * (`clear_tool_results`, `shorten_arguments`, `summarize`, `cut_oversized`).
   */
  levels: LevelReport[];
  /** Repairs made to broken input (with `policy.repairInput`). */
  repairs: InputRepair[];
}
