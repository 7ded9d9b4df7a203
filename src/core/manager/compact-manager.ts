import { backgroundFor } from '../background/background-for.js';
import { BackgroundPreparations, type BackgroundStatus } from '../background/background-preparation.js';
import {
  type AgentCompactor,
  agentCompactor,
  agentStateKey,
  lockTtl,
} from '../background/compaction-flight.js';
import { backlogEvent } from '../background/queue-backlog.js';
import { cachePriceFor, checkPricing, type SessionCost } from '../counting/session-cost.js';
import { holdEncodings, type TokenCounter, tokenCounterFor } from '../counting/token-counter.js';
import { warnUnknownModel } from '../counting/unknown-model-warning.js';
import { UsageLedger } from '../counting/usage-ledger.js';
import { EventBus, newOperation } from '../events/event-bus.js';
import type {
  CompactEvent,
  CompactEventListener,
  CompactEventName,
  CompactEventProperties,
} from '../events/events.js';
import { refusedPreparedEvent, storeFaultEvents } from '../events/store-fault-events.js';
import { codecFor } from '../messages/formats/detect-format.js';
import { MessageIndex } from '../messages/message-index.js';
import { type CompactPolicy, resolvePolicy } from '../policy.js';
import { estimateRequest } from '../preflight/index/estimate-request.js';
import type { PipelineDeps } from '../preflight/prepare-request.js';
import { CallQueue } from '../queues/call-queue.js';
import type { Redactor } from '../redaction/redactor.js';
import { checkCallSessionId } from '../session/session-id.js';
import { MemorySessionStore, type SessionState, type SessionStore } from '../session/session-store.js';
import type { FailOpenStore } from '../store/fail-open-store.js';
import { pipelineStore } from '../store/pipeline-store.js';
import { EmbeddedSummarizer } from '../summary/embedded-summarizer.js';
import type { Summarizer } from '../summary/summarizer.js';
import {
  type CacheStatus,
  cacheStatus,
  type EndSessionOptions,
  endSessionMemory,
  forgetEvicted,
  freeMemory,
  type ManagerMemory,
  resetSession,
} from './manager-memory.js';
import type {
  CompactionResult,
  CompactManagerOptions,
  CompactOptions,
  PreflightOptions,
  ReportedUsage,
  TokenEstimate,
} from './manager-options.js';
import { setManagerRedactor } from './manager-redactors.js';
import { pipelineDeps } from './pipeline-deps.js';
import { checkCallOptions, resolveSettings } from './resolve-settings.js';
import { type CallContext, runCall } from './run-call.js';
import { warmFirstCall } from './warm-first-call.js';

export type { BackgroundStatus } from '../background/background-preparation.js';
export { agentStateKey, DEFAULT_LOCK_TTL_MS } from '../background/compaction-flight.js';
export {
  type AgentCompactorOptions,
  type CompactionResult,
  type CompactionSummary,
  type CompactManagerOptions,
  type CompactOptions,
  DEFAULT_MAX_CONTEXT_TOKENS,
  DEFAULT_MODEL,
  DEFAULT_SUMMARIZER_TIMEOUT_MS,
  type PreflightOptions,
  type ReportedUsage,
  type TokenEstimate,
} from './manager-options.js';

/**
 * Keeps each session's request inside the model's context window. Call {@link preflight}
 * right before every model call with the full history (or the compacted view you
 * persisted); it returns the messages to send.
 *
 * The manager keeps what outlives one call (options, sessions and their store, locks, the
 * event bus, exporters, the archive); each call runs the preflight pipeline in
 * `src/core/preflight/` (index, resume the view, count, decide, cascade, assemble).
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
  readonly #customStrategies: string[];
  readonly #redact: Redactor | undefined;
  readonly #redactorRules: { warm(): Promise<void>; release(): void };
  readonly #bus: EventBus;
  readonly #deps: PipelineDeps;
  readonly #index: MessageIndex;
  readonly #queue = new CallQueue();
  readonly #usage: UsageLedger;
  readonly #agents = new Map<string, AgentCompactor>();
  readonly #background: BackgroundPreparations | undefined;
  readonly #lockTtlMs: number | undefined; // the session lock's time to live (undefined: no lock)
  /** The store the pipeline uses: `store` behind fail-open (undefined for the in-process store). */
  readonly #failOpen: FailOpenStore | undefined;
  /** What outlives one call in memory, for `endSession`, `reset`, `cacheStatus` and `shutdown`. */
  readonly #memory: ManagerMemory;
  /** What each call runs with (run-call.ts). */
  readonly #calls: CallContext;
  /** The shared encodings and tables, released with the last manager: taken last in the constructor. */
  readonly #endHold: () => void;
  #ready: Promise<void> | true | undefined; // true once the counter is loaded (see ready)

  constructor(options: CompactManagerOptions = {}) {
    const settings = resolveSettings(options);
    this.#index = new MessageIndex(undefined, settings.cacheMaxBytes);
    this.model = settings.model;
    this.maxContextTokens = settings.maxContextTokens;
    this.#customStrategies = settings.customStrategies;
    this.policy = settings.policy;
    this.counter = options.tokenCounter ?? tokenCounterFor(this.model);
    const cachePrice = cachePriceFor(this.model, checkPricing(options.pricing));
    this.#usage = new UsageLedger(cachePrice);
    this.store = options.store ?? new MemorySessionStore();
    this.#summarizer = options.summarizer ?? this.#embedded;
    const timeoutMs = settings.summarizerTimeoutMs;
    this.#redact = settings.redact;
    setManagerRedactor(this, settings.redact);
    this.#redactorRules = settings.redactorRules;
    this.#bus = new EventBus(
      options.exporters ?? [],
      options.exportQueue,
      this.#redact,
      settings.redactionFailures,
    );
    warnUnknownModel(this.#bus, this.model, options.maxContextTokens !== undefined);
    // Versions resume above the archived summaries when the store holds nothing (issue 46).
    const piped = pipelineStore(
      this.store,
      options.storage,
      settings,
      storeFaultEvents(this.#bus, this.store.name),
    );
    this.#failOpen = piped.failOpen;
    const store = piped.store;
    this.#deps = pipelineDeps(options, settings, {
      counter: this.counter,
      model: this.model,
      store,
      bus: this.#bus,
      index: this.#index,
      summarizer: this.#summarizer,
      embedded: this.#embedded,
      cachePrice,
      onEvict: (key, history) => forgetEvicted(this.#memory, key, history),
    });
    this.#lockTtlMs = lockTtl(options.sessionLock, this.store);
    const signing = { marks: this.#deps.marks, onRefused: refusedPreparedEvent(this.#bus) };
    const onBacklog = backlogEvent(this.#bus);
    this.#background = backgroundFor(options, store, this.#lockTtlMs, timeoutMs, signing, onBacklog);
    for (const [name, agent] of Object.entries(options.agents ?? {})) {
      // Validated once here; merged again with the call's policy.
      if (agent?.policy) resolvePolicy({ ...this.policy, ...agent.policy }, this.#customStrategies);
      this.#agents.set(name, agentCompactor(name, agent, this.#deps, this.#embedded, timeoutMs));
    }
    this.#memory = {
      deps: this.#deps,
      index: this.#index,
      agents: this.#agents,
      usage: this.#usage,
      background: this.#background,
      failOpen: this.#failOpen,
      lockTtlMs: this.#lockTtlMs,
    };
    this.#calls = {
      deps: this.#deps,
      agents: this.#agents,
      policy: this.policy,
      customStrategies: this.#customStrategies,
      background: this.#background,
      lockTtlMs: this.#lockTtlMs,
      failOpen: this.#failOpen,
      usage: this.#usage,
      maxContextTokens: this.maxContextTokens,
    };
    // Last: a constructor that threw above holds nothing; the last shutdown still drops the caches.
    this.#endHold = holdEncodings();
  }

  /**
   * Loads the tokenizer's tables in slices of a few milliseconds (`await manager.ready()` at
   * start-up); calls made before it wait for the same load instead of loading in one block.
   * It also readies what a fresh process's first call on a known session would load or compile
   * (warm-first-call.ts: the tokenizer's expressions, the summary key when it is given or its
   * file exists, Node's crypto, the built-in summarizer, the quick path's code with a shared store).
   */
  async ready(): Promise<void> {
    if (this.#ready === true) return;
    const { model, maxContextTokens } = this;
    const rehearsal = (store: SessionStore) =>
      new CompactManager({ model, maxContextTokens, store, redaction: false });
    this.#ready ??= warmFirstCall(this.counter, this.#deps.marks, this.store, rehearsal, this.#redactorRules);
    await this.#ready;
    this.#ready = true;
  }

  /** The state key of a session for an agent (the session id unless the agent has its own compactor). */
  #keyOf(sessionId: string, agent: string | undefined): string {
    return agent !== undefined && this.#agents.has(agent) ? agentStateKey(sessionId, agent) : sessionId;
  }

  /** Counters of the background preparations (all zero without `background: true`). */
  backgroundStatus(): BackgroundStatus {
    return this.#background?.status() ?? new BackgroundPreparations().status();
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
   * Emits one event for a session from an integration (for example
   * `compact.overflow_recovery`): redacted and exported like the manager's own events.
   */
  emit<N extends CompactEventName>(
    sessionId: string,
    name: N,
    properties: CompactEventProperties[N],
    options: { traceId?: string; parentSpanId?: string } = {},
  ): CompactEvent<N> {
    return this.#bus.emit(newOperation(sessionId, options), name, properties, { start: Date.now() });
  }

  /**
   * Subscribes to one event, or to all with `'*'`. Listeners run synchronously, in the
   * caller's async context; a throwing listener is reported on stderr and ignored.
   * Returns a function that unsubscribes.
   */
  on<N extends CompactEventName>(name: N | '*', listener: CompactEventListener<N>): () => void {
    return this.#bus.on(name, listener);
  }

  /** Counts a request: system prompt, developer messages, tool schemas and messages. */
  estimate(
    messages: readonly unknown[],
    options: Pick<PreflightOptions, 'tools' | 'system' | 'format'> = {},
  ): TokenEstimate {
    return estimateRequest(
      this.#deps,
      messages,
      codecFor(messages, options.format),
      options,
      this.maxContextTokens,
    );
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
    checkCallSessionId(sessionId);
    checkCallOptions(options);
    const codec = codecFor(messages, options.format);
    const key = this.#keyOf(sessionId, options.agent);
    if (this.#ready !== true) await this.ready();
    const run = () => runCall<M>(this.#calls, { sessionId, key, messages, codec, options });
    const failOpen = this.#failOpen; // one budget of `storeTimeoutMs` for the call's store waits
    return this.#queue.enqueue(key, failOpen ? () => failOpen.within(key, run) : run, options.signal);
  }

  /**
   * Records the input tokens a provider reported for the session's last request. SDK
   * integrations call it for you; call it yourself when you call the provider directly.
   */
  recordUsage(sessionId: string, usage: ReportedUsage): void {
    const recorded = this.#usage.record(sessionId, usage, this.#deps.calibration);
    if (recorded.mismatch) this.emit(sessionId, 'compact.warning', recorded.mismatch);
    // Archived with the session's events too: `status` and `report` read the cost there.
    this.#deps.archive.emitArchived(sessionId, 'compact.usage', recorded.usage);
  }

  /** The session's cost under prompt caching so far (see {@link SessionCost}; `pricing` prices it). */
  costSnapshot(sessionId: string): SessionCost | undefined {
    return this.#usage.cost(sessionId);
  }

  /** The last usage recorded for a session (input tokens, cache included). */
  lastReportedUsage(sessionId: string): { inputTokens: number; at: number } | undefined {
    return this.#usage.lastReported(sessionId);
  }

  /**
   * Exports queued events and waits for pending archive writes, and for the work a call left
   * for after it (the exact count of a first call decided from a bound, token counts written).
   */
  async flush(): Promise<void> {
    await this.#deps.counts.settled();
    await this.#deps.archive.flush();
    await this.#bus.flush();
  }

  /**
   * Aborts background preparations (waiting until none runs), tries once more to write what
   * a store outage kept (within `storeTimeoutMs`), flushes events, shuts exporters down,
   * closes the storage adapter (given up after `archiveTimeoutMs`: one waiting for a write
   * stuck on a hung mount does not hold shutdown) and the session store (`store.close()`: the connection a
   * store opened from a URL or a config file; a client you gave it stays open) and disposes
   * the summarizer, and drops the redactor's compiled rules (built again if the manager is
   * called later). The last manager of the process to shut down also drops what they shared:
   * the tokenizer's encodings and the tables built on first use (the instruction model, word
   * ranks, the default redactor), built again if a manager is used later.
   */
  async shutdown(): Promise<void> {
    await this.#background?.shutdown();
    // One last try for writes kept during a store outage, within `storeTimeoutMs`.
    await this.#failOpen?.shutdown();
    await this.#deps.counts.settled();
    await this.#deps.archive.flush();
    await this.#bus.shutdown();
    await this.#deps.archive.close();
    // The store's own connection (one it made from a URL, as a config file's store does).
    await this.store.close?.().catch(() => undefined);
    await this.#summarizer.dispose?.();
    freeMemory(this.#memory);
    this.#redactorRules.release();
    this.#endHold();
  }

  /**
   * Frees what this manager holds in memory for a session and its agents' compactors (history,
   * parses, view, usage, preparation, state copy). Its stored state stays: a later call resumes it.
   * With `{ closed: true }` (the conversation is over), its preparation job still waiting in
   * the queue is withdrawn too.
   */
  endSession(sessionId: string, options?: EndSessionOptions): void {
    endSessionMemory(this.#memory, sessionId, options);
  }

  /**
   * What the manager holds in memory between calls: sessions and their bytes (capped by
   * `cacheMaxBytes`), shared parsed messages, and in-process copies of stored states.
   */
  cacheStatus(): CacheStatus {
    return cacheStatus(this.#memory);
  }

  /** Forgets a session's compaction state (the next call starts over from the raw history). */
  async reset(sessionId: string): Promise<void> {
    checkCallSessionId(sessionId);
    await resetSession(this.#memory, sessionId);
  }

  /** The session's stored state (or an agent's, for an agent with its own compactor), if any. */
  async state(sessionId: string, agent?: string): Promise<SessionState | undefined> {
    return this.#deps.store.get(this.#keyOf(sessionId, agent));
  }
}
