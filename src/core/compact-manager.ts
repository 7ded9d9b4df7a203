import { EmbeddedSummarizer } from './embedded-summarizer.js';
import { CompactError, invalidConfig, isCompactError } from './errors.js';
import {
  type AnyCompactEvent,
  type CompactEvent,
  type CompactEventListener,
  type CompactEventName,
  type CompactEventProperties,
  type EventExporter,
  type KeptCounts,
  newSpanId,
  type TokenBreakdown,
} from './events.js';
import { ExportQueue, type ExportQueueOptions } from './export-queue.js';
import { detectFormat, MESSAGE_CODECS } from './formats/detect-format.js';
import type { MessageCodec } from './formats/message-codec.js';
import { type CompactMessage, formatSummaryText, type MessageFormat, summaryBody } from './message.js';
import { entryTokens, type IndexedMessage, MessageIndex, toCompactMessage } from './message-index.js';
import {
  assertNoOrphanResults,
  buildUnits,
  closePinned,
  isPinned,
  type PartitionInput,
  type PinRule,
  selectRecent,
} from './partition.js';
import { type CompactPolicy, resolvePolicy } from './policy.js';
import { createRedactor, type Redactor, type RedactorOptions, redactDeep } from './redactor.js';
import { MemorySessionStore, type SessionState, type SessionStore } from './session-store.js';
import type { StorageAdapter } from './storage-adapter.js';
import type { SummarizeResult, Summarizer, SummarizerErrorReport } from './summarizer.js';
import { modelInfo, type TokenCounter, tokenCounterFor } from './token-counter.js';

/** The context window assumed when neither the options nor the model table give one. */
export const DEFAULT_MAX_CONTEXT_TOKENS = 128_000;
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
   * Time limit of one summarizer call, retries included; past it the manager falls back to
   * the embedded summarizer, then to pruning only.
   * @default 30_000, or the summarizer's `maxDurationMs` + 1 s when longer
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
   * Redact the messages handed to the summarizer (they leave the process with an LLM
   * summarizer). The agent's own messages are never changed.
   * @default true with a custom summarizer, false with the embedded one (in process)
   */
  redactSummarizerInput?: boolean;
}

/** Per-call options of {@link CompactManager.preflight} and {@link CompactManager.compact}. */
export interface PreflightOptions {
  /** Tool schemas sent with the request (counted in the budget). */
  tools?: readonly unknown[];
  /** A system prompt sent apart from the messages (Anthropic `system`, Agents `instructions`). */
  system?: string | readonly unknown[];
  /** The messages' format. @default detected */
  format?: MessageFormat;
  /** The caller's trace id. @default the session id */
  traceId?: string;
  /** The caller's span, under which the events nest. */
  parentSpanId?: string;
  /** The agent or role (for per-agent summarizer prompts). */
  agent?: string;
  /** Aborts a running summarization. */
  signal?: AbortSignal;
  /** Overrides of the policy for this call. */
  policy?: Partial<CompactPolicy>;
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
  /** Anthropic `cache_read_input_tokens` (counted in the request's size). */
  cacheReadInputTokens?: number;
  /** Anthropic `cache_creation_input_tokens` (counted in the request's size). */
  cacheCreationInputTokens?: number;
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
  /** `total / maxContextTokens`. */
  usagePct: number;
  /** The counter's name (e.g. `o200k_base`). */
  tokenizer: string;
  /** False when counts are estimates (models without a public tokenizer). */
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
  fallback?: string;
}

/** The result of {@link CompactManager.compact}. */
export interface CompactionResult<M = unknown> {
  /** The messages to send, in the caller's format. */
  messages: M[];
  /** True when this call compacted. */
  applied: boolean;
  /** Why (not) compacted. */
  reason: string;
  /** Tokens of the request before this call's compaction (the view as it stood). */
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
}

interface OperationContext {
  sessionId: string;
  operationId: string;
  traceId: string;
  parentId: string | undefined;
  archived: AnyCompactEvent[] | undefined;
}

interface ViewItem {
  item: IndexedMessage;
  pinned: boolean;
  isSummary: boolean;
  tokens: number;
}

/**
 * Keeps each session's request inside the model's context window. Call {@link preflight}
 * right before every model call with the full history (or the compacted view you
 * persisted); it returns the messages to send.
 *
 * @example
 * ```ts
 * import { CompactManager } from 'agent-compaction';
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
 * const messages = await manager.preflight(sessionId, history, { tools });
 * const reply = await openai.chat.completions.create({ model: 'gpt-4o', messages, tools });
 * ```
 */
export class CompactManager {
  /** The agent's model (selects the tokenizer). */
  readonly model: string;
  /** The context window in tokens. */
  readonly maxContextTokens: number;
  /** The resolved policy, defaults applied. */
  readonly policy: Readonly<CompactPolicy>;
  /** The token counter in use. */
  readonly counter: TokenCounter;
  /** Where per-session state lives. */
  readonly store: SessionStore;
  readonly #summarizer: Summarizer;
  readonly #embedded = new EmbeddedSummarizer();
  readonly #summarizerTimeoutMs: number;
  readonly #storage: StorageAdapter | undefined;
  readonly #queue: ExportQueue;
  readonly #redact: Redactor | undefined;
  readonly #customStrategies: string[];
  readonly #redactSummarizerInput: boolean;
  readonly #index = new MessageIndex();
  readonly #listeners = new Map<string, Set<CompactEventListener>>();
  readonly #locks = new Map<string, Promise<unknown>>();
  readonly #toolCounts = new WeakMap<readonly unknown[], number>();
  readonly #systemCounts = new Map<string, number>();
  readonly #idSets = new WeakMap<
    SessionState,
    {
      coveredIds?: Set<string>;
      pinnedIds?: Set<string>;
      keptIds?: Set<string>;
      summaryMessage?: { format: MessageFormat; version: number; wire: unknown; tokens: number };
    }
  >();
  readonly #archiveTails = new Map<string, Promise<void>>();
  readonly #pendingArchives = new Set<Promise<void>>();
  readonly #reportedUsage = new Map<string, { inputTokens: number; at: number }>();
  #redactionWarned = false;

  constructor(options: CompactManagerOptions = {}) {
    if (options === null || typeof options !== 'object') throw invalidConfig('options', 'must be an object');
    this.model = options.model ?? DEFAULT_MODEL;
    if (typeof this.model !== 'string' || this.model === '')
      throw invalidConfig('model', 'must be a non-empty string');
    const maxContext =
      options.maxContextTokens ?? modelInfo(this.model).contextWindow ?? DEFAULT_MAX_CONTEXT_TOKENS;
    if (typeof maxContext !== 'number' || !Number.isInteger(maxContext) || maxContext <= 0) {
      throw invalidConfig('maxContextTokens', `must be a positive integer (got ${String(maxContext)})`);
    }
    this.maxContextTokens = maxContext;
    this.#customStrategies = [...(options.customStrategies ?? [])];

    this.policy = Object.freeze(resolvePolicy(options.policy, this.#customStrategies));
    if (this.policy.hardCapBuffer >= maxContext) {
      throw invalidConfig('policy.hardCapBuffer', `must be smaller than maxContextTokens (${maxContext})`);
    }
    this.counter = options.tokenCounter ?? tokenCounterFor(this.model);
    this.store = options.store ?? new MemorySessionStore();
    this.#summarizer = options.summarizer ?? this.#embedded;
    // History sent to an LLM summarizer leaves the process: redacted unless asked otherwise.
    this.#redactSummarizerInput = options.redactSummarizerInput ?? this.#summarizer !== this.#embedded;
    this.#summarizerTimeoutMs =
      options.summarizerTimeoutMs ??
      Math.max(DEFAULT_SUMMARIZER_TIMEOUT_MS, (this.#summarizer.maxDurationMs ?? 0) + 1000);
    if (!(this.#summarizerTimeoutMs > 0))
      throw invalidConfig('summarizerTimeoutMs', 'must be a positive number');
    this.#storage = options.storage;
    this.#queue = new ExportQueue(options.exporters ?? [], options.exportQueue);
    const redaction = options.redaction ?? true;
    this.#redact =
      redaction === false
        ? undefined
        : typeof redaction === 'function'
          ? redaction
          : createRedactor(redaction === true ? {} : redaction);
  }

  /** The context budget: `maxContextTokens - hardCapBuffer`. */
  get budget(): number {
    return this.maxContextTokens - this.policy.hardCapBuffer;
  }

  /** The token count at which compaction triggers: `triggerPct x maxContextTokens`. */
  get triggerTokens(): number {
    return Math.floor(this.policy.triggerPct * this.maxContextTokens);
  }

  /**
   * Subscribes to one event, or to all with `'*'`. Listeners run synchronously, in the
   * caller's async context; a throwing listener is reported on stderr and ignored.
   * Returns a function that unsubscribes.
   */
  on<N extends CompactEventName>(name: N | '*', listener: CompactEventListener<N>): () => void {
    let set = this.#listeners.get(name);
    if (!set) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(listener as CompactEventListener);
    return () => set.delete(listener as CompactEventListener);
  }

  /** Counts a request: system prompt, developer messages, tool schemas and messages. */
  estimate(
    messages: readonly unknown[],
    options: Pick<PreflightOptions, 'tools' | 'system' | 'format'> = {},
  ): TokenEstimate {
    const codec = this.#codec(messages, options.format);
    const items = this.#index.index(messages, codec);
    const breakdown = this.#breakdown(
      items.map((item) => ({ item, tokens: entryTokens(item, this.counter) })),
      options,
    );
    const total = breakdown.system + breakdown.developer + breakdown.toolsSchema + breakdown.messages;
    return {
      model: this.model,
      total,
      breakdown,
      maxContextTokens: this.maxContextTokens,
      usagePct: total / this.maxContextTokens,
      tokenizer: this.counter.name,
      exact: this.counter.exact,
    };
  }

  /**
   * Returns the messages to send for this session: the view (pinned + summary + what the
   * summary does not cover), compacted first when it crosses the threshold. Same format as
   * the input; `meta` is stripped; the input is never mutated.
   */
  async preflight<M = unknown>(
    sessionId: string,
    messages: readonly M[],
    options: PreflightOptions = {},
  ): Promise<M[]> {
    return (await this.compact<M>(sessionId, messages, options)).messages;
  }

  /** Compacts regardless of the threshold, recording `note` in the events. */
  async manualCompact<M = unknown>(
    sessionId: string,
    messages: readonly M[],
    options: CompactOptions = {},
  ): Promise<CompactionResult<M>> {
    return this.compact<M>(sessionId, messages, { ...options, force: true });
  }

  /** Like {@link preflight}, returning the full {@link CompactionResult}. */
  async compact<M = unknown>(
    sessionId: string,
    messages: readonly M[],
    options: CompactOptions = {},
  ): Promise<CompactionResult<M>> {
    if (typeof sessionId !== 'string' || sessionId === '') {
      throw new CompactError('invalid_messages', 'sessionId must be a non-empty string', {
        issues: [{ path: ['sessionId'], message: 'must be a non-empty string' }],
      });
    }
    const codec = this.#codec(messages, options.format);
    const items = this.#index.index(messages, codec);
    assertNoOrphanResults(items.map((item) => item.entry));
    const previous = this.#locks.get(sessionId);
    const run = (previous ?? Promise.resolve()).then(
      () => this.#run<M>(sessionId, messages, items, codec, options),
      () => this.#run<M>(sessionId, messages, items, codec, options),
    );
    this.#locks.set(sessionId, run);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    void settled.then(() => {
      if (this.#locks.get(sessionId) === run) this.#locks.delete(sessionId);
    });
    const signal = options.signal;
    if (!signal) return run;
    // The caller may give up while waiting for the session's lock; the queued run then
    // stops at its first abort check.
    this.#throwIfAborted(signal);
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(new CompactError('aborted', 'compaction aborted by the caller', { cause: signal.reason }));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([run, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort!);
    }
  }

  /** Exports queued events and waits for pending archive writes. */
  async flush(): Promise<void> {
    await Promise.all([...this.#pendingArchives]);
    await this.#queue.flush();
  }

  /** Flushes events, shuts exporters down and closes the storage adapter. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.#pendingArchives]);
    await this.#queue.shutdown();
    await this.#storage?.close?.();
    await this.#summarizer.dispose?.();
  }

  /**
   * Records the input tokens a provider reported for the session's last request. SDK
   * integrations call it for you; call it yourself when you call the provider directly.
   */
  recordUsage(sessionId: string, usage: ReportedUsage): void {
    const total =
      usage.inputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0);
    if (!Number.isFinite(total) || total < 0)
      throw invalidConfig('usage.inputTokens', 'must be a non-negative number');
    this.#reportedUsage.set(sessionId, { inputTokens: total, at: Date.now() });
  }

  /** The last usage recorded for a session (input tokens, cache included). */
  lastReportedUsage(sessionId: string): { inputTokens: number; at: number } | undefined {
    return this.#reportedUsage.get(sessionId);
  }

  /** Forgets a session's compaction state (the next call starts over from the raw history). */
  async reset(sessionId: string): Promise<void> {
    await this.store.delete(sessionId);
  }

  /** The session's stored state, if any. */
  async state(sessionId: string): Promise<SessionState | undefined> {
    return this.store.get(sessionId);
  }

  /** A list of ids of the stored state as a set, built once per state object. */
  #idSet(
    state: SessionState | undefined,
    key: 'coveredIds' | 'pinnedIds' | 'keptIds',
  ): Set<string> | undefined {
    const ids = state?.[key];
    if (!state || !ids || ids.length === 0) return undefined;
    let sets = this.#idSets.get(state);
    if (!sets) {
      sets = {};
      this.#idSets.set(state, sets);
    }
    sets[key] ??= new Set(ids);
    return sets[key];
  }

  #codec(messages: readonly unknown[], format: MessageFormat | undefined): MessageCodec {
    if (format !== undefined && !(format in MESSAGE_CODECS)) {
      throw invalidConfig(
        'format',
        `must be one of ${Object.keys(MESSAGE_CODECS).join(', ')} (got ${String(format)})`,
      );
    }
    return MESSAGE_CODECS[format ?? detectFormat(messages)];
  }

  #countSystem(system: PreflightOptions['system']): number {
    if (system === undefined) return 0;
    const text = typeof system === 'string' ? system : JSON.stringify(system);
    let count = this.#systemCounts.get(text);
    if (count === undefined) {
      count = this.counter.countText(text) + 4;
      if (this.#systemCounts.size > 256) this.#systemCounts.clear();
      this.#systemCounts.set(text, count);
    }
    return count;
  }

  #countTools(tools: readonly unknown[] | undefined): number {
    if (!tools || tools.length === 0) return 0;
    if (!Array.isArray(tools)) throw invalidConfig('tools', 'must be an array of tool schemas');
    let count = this.#toolCounts.get(tools);
    if (count === undefined) {
      count = this.counter.countTools(tools);
      this.#toolCounts.set(tools, count);
    }
    return count;
  }

  #breakdown(
    view: readonly { item: IndexedMessage; tokens: number }[],
    options: Pick<PreflightOptions, 'tools' | 'system'>,
  ): TokenBreakdown {
    const breakdown: TokenBreakdown = {
      system: this.#countSystem(options.system),
      developer: 0,
      toolsSchema: this.#countTools(options.tools),
      messages: this.counter.requestOverhead,
    };
    for (const { item, tokens } of view) {
      const role = item.entry.parsed.role;
      if (role === 'system') breakdown.system += tokens;
      else if (role === 'developer') breakdown.developer += tokens;
      else breakdown.messages += tokens;
    }
    return breakdown;
  }

  #emit<N extends CompactEventName>(
    context: OperationContext,
    name: N,
    properties: CompactEventProperties[N],
    timing: { start: number; end?: number; parentId?: string; status?: 'ok' | 'error' },
  ): CompactEvent<N> {
    let props = properties;
    if (this.#redact) props = redactDeep(properties, this.#redact);
    else if (!this.#redactionWarned) {
      this.#redactionWarned = true;
      this.#emitRaw(
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
    return this.#emitRaw(context, name, props, timing);
  }

  #emitRaw<N extends CompactEventName>(
    context: OperationContext,
    name: N,
    properties: CompactEventProperties[N],
    timing: { start: number; end?: number; parentId?: string; status?: 'ok' | 'error' },
  ): CompactEvent<N> {
    const end = Math.max(timing.end ?? Date.now(), timing.start);
    const event: CompactEvent<N> = {
      type: 'span',
      name,
      traceId: context.traceId,
      spanId: newSpanId(),
      sessionId: context.sessionId,
      operationId: context.operationId,
      startTime: timing.start,
      endTime: end,
      status: timing.status ?? (name === 'compact.error' ? 'error' : 'ok'),
      properties,
    };
    const parentId = timing.parentId ?? context.parentId;
    if (parentId !== undefined) event.parentId = parentId;
    for (const key of [name, '*']) {
      const listeners = this.#listeners.get(key);
      if (!listeners) continue;
      for (const listener of listeners) {
        try {
          (listener as CompactEventListener<N>)(event);
        } catch (error) {
          process.stderr.write(
            `[agent-compaction] event listener failed: ${String((error as Error)?.message ?? error)}\n`,
          );
        }
      }
    }
    this.#queue.enqueue(event as AnyCompactEvent);
    context.archived?.push(event as AnyCompactEvent);
    return event;
  }

  async #run<M>(
    sessionId: string,
    messages: readonly M[],
    items: IndexedMessage[],
    codec: MessageCodec,
    options: CompactOptions,
    attempt = 0,
  ): Promise<CompactionResult<M>> {
    this.#throwIfAborted(options.signal);
    const policy = options.policy
      ? resolvePolicy({ ...this.policy, ...options.policy }, this.#customStrategies)
      : this.policy;
    const context: OperationContext = {
      sessionId,
      operationId: newSpanId(),
      traceId: options.traceId ?? sessionId,
      parentId: options.parentSpanId,
      archived: undefined,
    };
    const started = Date.now();
    let state = await this.store.get(sessionId);

    // A summary message in the history (a persisted view) is accepted only in the codec's
    // summary role, and only when it is the summary this session stored or, with nothing
    // stored, when it sits where a summary goes (the first message after the pinned ones).
    // Anything else that merely starts with the tag is ordinary content.
    const summaryItem = this.#acceptedSummary(items, state, policy);
    // The stored state must belong to this history: a raw history that shares no message with
    // what the summary covers or kept is another conversation under the same session id
    // (an adapter without a session id, say), and must not receive this session's summary.
    const mismatch = summaryItem === undefined && state !== undefined && !this.#sharesHistory(items, state);
    if (mismatch) {
      this.#emit(
        context,
        'compact.error',
        {
          errorType: 'session_mismatch',
          message: `session "${sessionId}" has a stored summary, but this history shares no message with it: the summary is not sent (give each conversation its own session id)`,
          fallback: 'history without the stored summary',
        },
        { start: started },
      );
    }
    const effective = mismatch ? undefined : state;
    // A persisted view holds no covered message by construction, and its ids (content hash +
    // repeat count within the view) are not comparable with the raw history's.
    const covered = summaryItem ? undefined : this.#idSet(effective, 'coveredIds');
    const extraSummaries: IndexedMessage[] = [];
    const visible: IndexedMessage[] = [];
    for (const item of items) {
      if (item === summaryItem || covered?.has(item.id)) continue;
      visible.push(item);
    }
    const version = Math.max(state?.version ?? 0, summaryItem?.entry.summaryVersion ?? 0);
    const previousSummaryBody = summaryItem
      ? summaryBody(summaryItem.entry.parsed.text)
      : effective?.summary?.text;

    const pinRule = policy;
    const pinnedBefore = this.#idSet(effective, 'pinnedIds');
    const pinned = visible.map(
      (item) => isPinned(item.entry, pinRule) || pinnedBefore?.has(item.id) === true,
    );
    closePinned(
      visible.map((item) => item.entry),
      pinned,
    );

    // Remember protected messages, so they stay pinned when the caller persists the view
    // (from which `meta` is stripped). Written only when a new one appears.
    const newlyPinned: string[] = [];
    visible.forEach((item, k) => {
      if (pinned[k] && item.entry.parsed.meta !== undefined && pinnedBefore?.has(item.id) !== true)
        newlyPinned.push(item.id);
    });
    if (newlyPinned.length > 0) {
      const base: SessionState = state ?? { sessionId, version: 0, coveredIds: [], updatedAt: Date.now() };
      const updated: SessionState = {
        ...base,
        pinnedIds: [...(base.pinnedIds ?? []), ...newlyPinned],
        updatedAt: Date.now(),
      };
      if (await this.store.set(sessionId, updated, { expectedVersion: base.version })) state = updated;
    }

    let fresh = 0;
    const count = (item: IndexedMessage) => {
      const cached = item.entry.tokens?.get(this.counter);
      if (cached !== undefined) return cached;
      fresh++;
      return entryTokens(item, this.counter);
    };
    const view: ViewItem[] = visible.map((item, k) => ({
      item,
      pinned: pinned[k]!,
      isSummary: false,
      tokens: count(item),
    }));

    // The summary message as it would be sent now.
    let summaryWire: unknown;
    let summaryTokens = 0;
    if (summaryItem) {
      summaryWire = summaryItem.entry.wire;
      summaryTokens = count(summaryItem);
    } else if (effective?.summary && version > 0) {
      ({ wire: summaryWire, tokens: summaryTokens } = this.#storedSummaryMessage(effective, codec, version));
    }

    const breakdown = this.#breakdown(view, options);
    breakdown.messages += summaryTokens;
    const tokensBefore = breakdown.system + breakdown.developer + breakdown.toolsSchema + breakdown.messages;
    const maxContext = options.maxContextTokens ?? this.maxContextTokens;
    const usagePct = tokensBefore / maxContext;
    const estimateEvent = this.#emit(
      context,
      'compact.token_estimate',
      {
        model: this.model,
        tEst: tokensBefore,
        maxTokens: maxContext,
        usagePct,
        breakdown,
        messageCount: view.length + (summaryWire ? 1 : 0),
        countedFresh: fresh,
      },
      { start: started },
    );

    const budget = maxContext - policy.hardCapBuffer;
    const triggerTokens = Math.floor(policy.triggerPct * maxContext);
    const manual = options.force === true;
    const triggered = manual || tokensBefore >= triggerTokens || tokensBefore > budget;
    const reason = manual
      ? 'manual'
      : tokensBefore >= triggerTokens
        ? 'usage_pct >= trigger_pct'
        : tokensBefore > budget
          ? 'over budget'
          : 'usage_pct < trigger_pct';
    const policySnapshot = {
      triggerPct: policy.triggerPct,
      hardCapBuffer: policy.hardCapBuffer,
      keepRecentTurns: policy.keepRecentTurns,
      keepToolIoPairs: policy.keepToolIoPairs,
      strategy: String(policy.strategy),
    };
    const pinnedCount = view.filter((v) => v.pinned).length;

    if (!triggered) {
      this.#emit(
        context,
        'compact.trigger_decision',
        {
          triggered: false,
          reason,
          policy: policySnapshot,
          tEst: tokensBefore,
          triggerTokens,
          budget,
          manual,
        },
        { start: estimateEvent.endTime },
      );
      // Before the first compaction the history goes out as it came (nothing is hoisted);
      // after it, in the layers the model has been seeing.
      const out =
        version === 0 ? view.map((v) => v.item.entry.wire) : this.#assemble(view, summaryWire, () => true);
      const result: CompactionResult<M> = {
        messages: out as M[],
        applied: false,
        reason,
        tokensBefore,
        tokensAfter: tokensBefore,
        budget,
        kept: { pinned: pinnedCount, recentTurns: 0, toolPairs: 0 },
        prunedCount: 0,
        version,
        format: codec.format,
      };
      if (summaryWire !== undefined) {
        const text = summaryItem
          ? summaryItem.entry.parsed.text
          : formatSummaryText(version, effective!.summary!.text);
        result.summary = {
          text,
          version,
          tokens: summaryTokens,
          summarizer: effective?.summary?.summarizer ?? 'unknown',
        };
      }
      return result;
    }

    // ---- Compaction ----
    context.archived = [estimateEvent as AnyCompactEvent];
    const decisionStart = Date.now();
    const fixed =
      this.#countSystem(options.system) +
      breakdown.toolsSchema +
      this.counter.requestOverhead +
      view.reduce((sum, v) => sum + (v.pinned ? v.tokens : 0), 0);
    const candidates: number[] = [];
    view.forEach((v, k) => {
      if (!v.pinned) candidates.push(k);
    });
    const partitionInputs: PartitionInput[] = view.map((v) => v.item.entry);
    const units = buildUnits(partitionInputs, candidates);
    const summaryReserve =
      policy.maxSummaryTokens + this.#summaryMessageTokens(codec, formatSummaryText(version + 1, ''));

    const fail = (message: string): never => {
      const error = new CompactError('insufficient_budget', message);
      this.#emit(
        context,
        'compact.error',
        { errorType: 'InsufficientBudget', message, fallback: 'none' },
        { start: decisionStart },
      );
      this.#trackArchive(context);
      throw error;
    };
    if (fixed > budget) {
      fail(
        `pinned messages, system prompt and tool schemas alone take ${fixed} tokens, over the budget of ${budget} (max_context_tokens ${maxContext} - hard_cap_buffer ${policy.hardCapBuffer}): reduce protected memory or raise the context limit`,
      );
    }

    let turns = policy.keepRecentTurns;
    let pairs = policy.keepToolIoPairs;
    let selection = selectRecent(units, turns, pairs);
    const keptTokens = (kept: Set<number>) =>
      [...kept].reduce((sum, c) => sum + view[candidates[c]!]!.tokens, 0);
    let total = fixed + keptTokens(selection.kept) + summaryReserve;
    let reduceTurns = true;
    // Reduce the recent window until the result fits the budget and sits below the trigger
    // (so the next call does not compact again); only the budget is a hard limit.
    while ((total > budget || total >= triggerTokens) && (turns > 1 || pairs > 1)) {
      if ((reduceTurns && turns > 1) || pairs <= 1) turns--;
      else pairs--;
      reduceTurns = !reduceTurns;
      selection = selectRecent(units, turns, pairs);
      total = fixed + keptTokens(selection.kept) + summaryReserve;
    }
    if (total > budget) {
      fail(
        `pinned messages (${fixed} tokens with system and tools) + a ${policy.maxSummaryTokens}-token summary + the last turn and tool pair (${keptTokens(selection.kept)} tokens) exceed the budget of ${budget}: reduce protected memory, lower max_summary_tokens or raise the context limit`,
      );
    }

    const keptCandidates = selection.kept;
    const remainder: CompactMessage[] = [];
    const prunedIds: string[] = [];
    candidates.forEach((k, c) => {
      if (keptCandidates.has(c)) return;
      const item = view[k]!.item;
      const message = toCompactMessage(item);
      remainder.push(
        this.#redactSummarizerInput && this.#redact ? redactMessage(message, this.#redact) : message,
      );
      prunedIds.push(item.id);
    });
    for (const extra of extraSummaries) prunedIds.push(extra.id);

    const kept: KeptCounts = {
      pinned: pinnedCount,
      recentTurns: selection.recentTurns,
      toolPairs: selection.toolPairs,
    };
    const decision = this.#emit(
      context,
      'compact.trigger_decision',
      {
        triggered: true,
        reason,
        policy: policySnapshot,
        tEst: tokensBefore,
        triggerTokens,
        budget,
        manual,
        ...(options.note ? { note: options.note } : {}),
        kept,
        prunedCount: remainder.length,
      },
      { start: estimateEvent.endTime, end: decisionStart },
    );

    const nextVersion = version + 1;
    this.#throwIfAborted(options.signal);
    await this.#archiveTranscript(context, messages, nextVersion, decision.spanId);

    // Summarize the previous summary plus the newly covered messages.
    let summaryText: string | undefined;
    let summaryBodyText: string | undefined;
    let summarizerName = this.#summarizer.name;
    let fallback: string | undefined;
    if (remainder.length > 0 || previousSummaryBody) {
      const outcome = await this.#summarize(context, decision.spanId, nextVersion, {
        sessionId,
        strategy: policy.strategy,
        messages: remainder,
        maxTokens: policy.maxSummaryTokens,
        ...(previousSummaryBody ? { previousSummary: previousSummaryBody } : {}),
        ...(options.note ? { note: options.note } : {}),
        ...(options.agent ? { agent: options.agent } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (outcome) {
        summaryBodyText = outcome.text;
        summarizerName = outcome.summarizer;
        fallback = outcome.fallback;
        summaryText = formatSummaryText(nextVersion, outcome.text);
      } else {
        fallback = 'pruning-only';
        summarizerName = 'none';
        // Keep the previous summary rather than lose what it held.
        if (previousSummaryBody) {
          summaryBodyText = previousSummaryBody;
          summaryText = formatSummaryText(nextVersion, previousSummaryBody);
        }
      }
    }

    const assembleStart = Date.now();
    const newSummaryWire = summaryText === undefined ? undefined : codec.summaryMessage(summaryText);
    const newSummaryTokens = summaryText === undefined ? 0 : this.#summaryMessageTokens(codec, summaryText);
    const keptSet = new Set<number>();
    view.forEach((v, k) => {
      if (v.pinned) keptSet.add(k);
    });
    candidates.forEach((k, c) => {
      if (keptCandidates.has(c)) keptSet.add(k);
    });
    const out = this.#assemble(view, newSummaryWire, (k) => keptSet.has(k));
    const tokensAfter = fixed + keptTokens(keptCandidates) + newSummaryTokens;
    if (tokensAfter > budget) {
      fail(
        `the compacted request takes ${tokensAfter} tokens, over the budget of ${budget}: reduce protected memory or raise the context limit`,
      );
    }

    const newState: SessionState = {
      sessionId,
      version: nextVersion,
      coveredIds: [...(effective?.coveredIds ?? []), ...prunedIds],
      keptIds: view.filter((v, k) => !v.pinned && keptSet.has(k)).map((v) => v.item.id),
      updatedAt: Date.now(),
    };
    const pinnedIds = new Set(effective?.pinnedIds ?? []);
    for (const v of view) if (v.pinned) pinnedIds.add(v.item.id);
    if (pinnedIds.size > 0) newState.pinnedIds = [...pinnedIds];
    if (summaryBodyText !== undefined) {
      newState.summary = {
        text: summaryBodyText,
        tokens: newSummaryTokens,
        summarizer: summarizerName,
        createdAt: Date.now(),
      };
    }
    this.#throwIfAborted(options.signal);
    const stored = await this.store.set(sessionId, newState, { expectedVersion: state?.version ?? 0 });
    if (!stored) {
      // Another process compacted this session meanwhile: use its state, once.
      const retry = attempt === 0;
      this.#emit(
        context,
        'compact.error',
        {
          errorType: 'concurrent_compaction',
          message: retry
            ? 'another compaction of this session landed first; its result is used'
            : 'the session state changed again while compacting; giving up',
          fallback: retry ? 'reload' : 'none',
        },
        { start: assembleStart },
      );
      this.#trackArchive(context);
      if (!retry) {
        throw new CompactError(
          'concurrent_compaction',
          `session "${sessionId}": the stored state kept changing during compaction`,
        );
      }
      return this.#run(sessionId, messages, items, codec, { ...options, force: false }, attempt + 1);
    }

    this.#emit(
      context,
      'compact.pruned_messages',
      {
        prunedCount: prunedIds.length,
        prunedIds,
        kept,
        tokensBefore,
        tokensAfter,
        version: nextVersion,
        pinnedLabels: view
          .filter((v) => v.pinned && v.item.entry.parsed.meta?.label)
          .map((v) => String(v.item.entry.parsed.meta!.label)),
      },
      { start: assembleStart, parentId: decision.spanId },
    );

    if (summaryText !== undefined && this.#storage) {
      const archivedSummary = {
        sessionId,
        step: nextVersion,
        text: summaryText,
        tokens: newSummaryTokens,
        strategy: String(policy.strategy),
        summarizer: summarizerName,
        coveredIds: newState.coveredIds,
        createdAt: Date.now(),
      };
      await this.#archive(context, decision.spanId, nextVersion, 'summary', () =>
        this.#storage!.saveSummary(
          sessionId,
          this.#redact ? redactDeep(archivedSummary, this.#redact) : archivedSummary,
          nextVersion,
        ),
      );
    }
    this.#trackArchive(context);
    void this.#queue.flush();

    const result: CompactionResult<M> = {
      messages: out as M[],
      applied: true,
      reason,
      tokensBefore,
      tokensAfter,
      budget,
      kept,
      prunedCount: prunedIds.length,
      version: nextVersion,
      format: codec.format,
    };
    if (summaryText !== undefined) {
      result.summary = {
        text: summaryText,
        version: nextVersion,
        tokens: newSummaryTokens,
        summarizer: summarizerName,
        ...(fallback ? { fallback } : {}),
      };
    }
    return result;
  }

  #summaryMessageTokens(codec: MessageCodec, text: string): number {
    const wire = codec.summaryMessage(text);
    const parsed = codec.parse(wire, 0);
    return this.counter.countMessage({ ...parsed, id: '', index: 0 });
  }

  #assemble(view: readonly ViewItem[], summaryWire: unknown, keep: (k: number) => boolean): unknown[] {
    const out: unknown[] = [];
    view.forEach((v, k) => {
      if (v.pinned && keep(k)) out.push(v.item.entry.wire);
    });
    if (summaryWire !== undefined) out.push(summaryWire);
    view.forEach((v, k) => {
      if (!v.pinned && keep(k)) out.push(v.item.entry.wire);
    });
    return out;
  }

  async #summarize(
    context: OperationContext,
    parentId: string,
    version: number,
    request: Omit<Parameters<Summarizer['summarize']>[0], 'countTokens' | 'reportError'>,
  ): Promise<{ text: string; summarizer: string; fallback?: string } | undefined> {
    const countTokens = (text: string) => this.counter.countText(text);
    const reportError = (report: SummarizerErrorReport) =>
      this.#emit(
        context,
        'compact.error',
        {
          errorType: report.errorType,
          message: report.message,
          fallback: report.fallback,
          ...(report.context ? { context: report.context } : {}),
        },
        { start: Date.now(), parentId },
      );
    const chain: Summarizer[] =
      this.#summarizer === this.#embedded ? [this.#embedded] : [this.#summarizer, this.#embedded];
    for (let attempt = 0; attempt < chain.length; attempt++) {
      const summarizer = chain[attempt]!;
      const start = Date.now();
      const next = attempt + 1 < chain.length ? chain[attempt + 1]!.name : 'pruning-only';
      try {
        const result = await this.#callWithTimeout(summarizer, { ...request, countTokens, reportError });
        const text = typeof result?.text === 'string' ? result.text.trim() : '';
        if (text === '')
          throw new CompactError('summarizer_failed', 'the summarizer returned an empty summary');
        const tokens = countTokens(text);
        if (tokens > request.maxTokens) {
          throw new CompactError(
            'summary_too_long',
            `the summary has ${tokens} tokens, over max_summary_tokens ${request.maxTokens}`,
          );
        }
        const inputTokens = request.messages.reduce((sum, m) => sum + this.counter.countMessage(m), 0);
        this.#emit(
          context,
          'compact.summary_created',
          {
            strategy: String(request.strategy),
            summarizer: result.summarizer ?? summarizer.name,
            inputMessages: request.messages.length,
            inputTokens,
            summaryTokens: tokens,
            compressionRatio: inputTokens > 0 ? tokens / inputTokens : 1,
            version,
            ...(result.model ? { model: result.model } : {}),
            ...(result.usage ? { usage: result.usage } : {}),
            latencyMs: Date.now() - start,
            summary: text,
          },
          { start, parentId },
        );
        return {
          text,
          summarizer: result.summarizer ?? summarizer.name,
          ...(attempt > 0 ? { fallback: summarizer.name } : {}),
        };
      } catch (error) {
        if (request.signal?.aborted)
          throw new CompactError('aborted', 'compaction aborted by the caller', { cause: error });
        this.#emit(
          context,
          'compact.error',
          {
            errorType: isCompactError(error) ? error.code : error instanceof Error ? error.name : 'Error',
            message: error instanceof Error ? error.message : String(error),
            fallback: next,
            context: { summarizer: summarizer.name },
          },
          { start, parentId },
        );
      }
    }
    return undefined;
  }

  async #callWithTimeout(
    summarizer: Summarizer,
    request: Parameters<Summarizer['summarize']>[0],
  ): Promise<SummarizeResult> {
    const controller = new AbortController();
    const signals = request.signal ? [controller.signal, request.signal] : [controller.signal];
    const signal = AbortSignal.any(signals);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new CompactError(
          'summarizer_timeout',
          `the summarizer did not answer within ${this.#summarizerTimeoutMs} ms`,
        );
        controller.abort(error);
        reject(error);
      }, this.#summarizerTimeoutMs);
    });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      if (request.signal?.aborted) reject(request.signal.reason);
      onAbort = () => reject(request.signal!.reason);
      request.signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([summarizer.summarize({ ...request, signal }), timeout, aborted]);
    } finally {
      clearTimeout(timer);
      if (onAbort) request.signal?.removeEventListener('abort', onAbort);
    }
  }

  async #archiveTranscript(
    context: OperationContext,
    messages: readonly unknown[],
    step: number,
    parentId: string,
  ): Promise<void> {
    if (!this.#storage) return;
    const transcript = this.#redact ? redactDeep(messages, this.#redact) : messages;
    await this.#archive(context, parentId, step, 'transcript', () =>
      this.#storage!.saveTranscript(context.sessionId, transcript, step),
    );
  }

  async #archive(
    context: OperationContext,
    parentId: string,
    step: number,
    artifact: string,
    write: () => Promise<string>,
  ): Promise<void> {
    const start = Date.now();
    try {
      const location = await write();
      this.#emit(
        context,
        'compact.archival',
        { step, storageAdapter: this.#storage!.name, artifact, location },
        { start, parentId },
      );
    } catch (error) {
      // An archive that fails never costs the conversation.
      this.#emit(
        context,
        'compact.error',
        {
          errorType: 'storage_failed',
          message: `${artifact} archive failed: ${error instanceof Error ? error.message : String(error)}`,
          fallback: 'continue without archive',
        },
        { start, parentId },
      );
    }
  }

  /**
   * Writes the operation's events to the archive in the background, after the session's
   * earlier writes (so lines never interleave); `flush()` and `shutdown()` wait for them.
   */
  #trackArchive(context: OperationContext): void {
    const events = context.archived;
    context.archived = undefined;
    const storage = this.#storage;
    if (!storage || !events || events.length === 0) return;
    const { sessionId } = context;
    const write = async () => {
      for (const event of events) {
        try {
          await storage.saveEvent(sessionId, event);
        } catch (error) {
          process.stderr.write(
            `[agent-compaction] event archive failed: ${error instanceof Error ? error.message : String(error)}\n`,
          );
          return;
        }
      }
    };
    const next = (this.#archiveTails.get(sessionId) ?? Promise.resolve()).then(write);
    this.#archiveTails.set(sessionId, next);
    this.#pendingArchives.add(next);
    void next.finally(() => {
      this.#pendingArchives.delete(next);
      if (this.#archiveTails.get(sessionId) === next) this.#archiveTails.delete(sessionId);
    });
  }

  /** Throws `CompactError('aborted')` when the caller's signal has fired. */
  #throwIfAborted(signal: AbortSignal | undefined): void {
    if (signal?.aborted)
      throw new CompactError('aborted', 'compaction aborted by the caller', { cause: signal.reason });
  }

  /**
   * The summary message of a persisted view, if the history carries one this session can
   * trust (see the call site).
   */
  #acceptedSummary(
    items: readonly IndexedMessage[],
    state: SessionState | undefined,
    rule: PinRule,
  ): IndexedMessage | undefined {
    let candidate: IndexedMessage | undefined;
    for (let i = items.length - 1; i >= 0; i--) {
      if (items[i]!.entry.summaryVersion !== undefined) {
        candidate = items[i];
        break;
      }
    }
    if (!candidate) return undefined;
    if (state?.summary) {
      const body = summaryBody(candidate.entry.parsed.text);
      return body === state.summary.text && candidate.entry.summaryVersion === state.version
        ? candidate
        : undefined;
    }
    if (state && state.version > 0) return undefined;
    // Nothing stored (a restart, another process with its own store): accept it only at the
    // summary position, right after the leading pinned messages.
    const firstUnpinned = items.find((item) => !isPinned(item.entry, rule));
    return firstUnpinned === candidate ? candidate : undefined;
  }

  /** True when the history contains a message the stored state covers or kept. */
  #sharesHistory(items: readonly IndexedMessage[], state: SessionState): boolean {
    const covered = this.#idSet(state, 'coveredIds');
    const kept = this.#idSet(state, 'keptIds');
    if (!covered && !kept) return true;
    return items.some((item) => covered?.has(item.id) === true || kept?.has(item.id) === true);
  }

  /** The stored summary as a message in this format, with its tokens (cached per state). */
  #storedSummaryMessage(
    state: SessionState,
    codec: MessageCodec,
    version: number,
  ): { wire: unknown; tokens: number } {
    let sets = this.#idSets.get(state);
    if (!sets) {
      sets = {};
      this.#idSets.set(state, sets);
    }
    const cached = sets.summaryMessage;
    if (cached && cached.format === codec.format && cached.version === version) return cached;
    const text = formatSummaryText(version, state.summary!.text);
    const message = {
      format: codec.format,
      version,
      wire: codec.summaryMessage(text),
      tokens: this.#summaryMessageTokens(codec, text),
    };
    sets.summaryMessage = message;
    return message;
  }
}

/** A copy of a message with its text, tool arguments and tool results redacted. */
function redactMessage(message: CompactMessage, redact: Redactor): CompactMessage {
  return {
    ...message,
    raw: redactDeep(message.raw, redact),
    text: redact(message.text),
    toolCalls: message.toolCalls.map((call) => ({ ...call, arguments: redact(call.arguments) })),
    toolResults: message.toolResults.map((result) => ({ ...result, output: redact(result.output) })),
  };
}
