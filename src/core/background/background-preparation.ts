/**
 * Background preparation (manager option `background: true`): once a session's request
 * passes `policy.prepareAtPct`, the older part of its view (everything before the policy's
 * verbatim window) is summarized off the critical path. When the trigger fires, the
 * prepared summary is swapped in if it still covers a prefix of the view (same summary
 * version, same message ids and contents, none of them pinned since); the messages after it
 * stay verbatim, or go through the cheap cascade levels. Otherwise the preparation is
 * discarded and the cascade runs as without background.
 *
 * One preparation per session key and summary version (single flight); a preflight that
 * waits on one and is aborted leaves it running for the next caller; `shutdown` aborts
 * them all and waits until none is left.
 */

import { CompactError } from '../errors.js';
import type { MessageCodec } from '../messages/formats/message-codec.js';
import type { CompactMessage } from '../messages/message.js';
import { toCompactMessage } from '../messages/message-index.js';
import type { CompactPolicy } from '../policy.js';
import { buildUnits, policySuffixStart } from '../preflight/build-units.js';
import {
  type SummarizeContext,
  type SummarizeOutcome,
  summarizeWithFallback,
  withKnownCounts,
} from '../preflight/cascade/summarize-remainder.js';
import type { BufferedEvent, PreparedSummary } from '../preflight/prepared-summary.js';
import type { SessionView, ViewEntry } from '../preflight/session-view.js';
import { checkSummaryOutput } from '../preflight/summary-output.js';
import { memoizeRedactor, type Redactor } from '../redaction/redactor.js';
import type { SessionStore } from '../session/session-store.js';
import {
  coversPrefix,
  preparedKey,
  publishPrepared,
  readPrepared,
  type SharedPrepared,
} from './shared-preparation.js';

export type { BufferedEvent, PreparedSummary } from '../preflight/prepared-summary.js';

interface Preparation {
  readonly baseVersion: number;
  readonly foldedIds: readonly string[];
  /** Content hashes of the folded messages (an edit that keeps an id changes the hash). */
  readonly foldedHashes: readonly string[];
  readonly controller: AbortController;
  readonly events: BufferedEvent[];
  readonly done: Promise<void>;
  settled: boolean;
  outcome: SummarizeOutcome | undefined;
  /** Starts the deferred work at once (shutdown), when it has not started. */
  kick: (() => void) | undefined;
  immediate: ReturnType<typeof setImmediate> | undefined;
}

/** What starting a preparation needs. */
export interface PreparationRequest {
  readonly sessionId: string;
  readonly view: SessionView;
  readonly policy: Readonly<CompactPolicy>;
  readonly summarize: Omit<SummarizeContext, 'emit'>;
  readonly codec: MessageCodec;
  readonly agent?: string;
  /**
   * Tokens to fold at least (oldest first): what the request will have to shed at the trigger
   * to reach the target, plus the summary's room. Without it, all before the policy window.
   */
  readonly foldAtLeast?: number;
}

/** Counters of a manager's background work (for tests, benchmarks and dashboards). */
export interface BackgroundStatus {
  /** Preparations started. */
  started: number;
  /** Prepared summaries swapped in at a trigger. */
  used: number;
  /** Preparations dropped: stale (history edited, summary moved on), failed, or evicted. */
  discarded: number;
  /** Preparations still running. */
  running: number;
  /** Preparations kept (running or ready). */
  kept: number;
}

/** The unpinned entries before the policy's verbatim window (what a preparation folds). */
export function planPreparation(
  view: SessionView,
  policy: Readonly<CompactPolicy>,
  foldAtLeast = Number.POSITIVE_INFINITY,
): ViewEntry[] {
  const unpinned = view.entries.filter((entry) => !entry.pinned);
  const units = buildUnits(unpinned);
  if (units.length === 0) return [];
  const policyStart = policySuffixStart(units, policy.keepRecentTurns, policy.keepToolIoPairs);
  // The oldest units, until they free what the trigger will need to reach the target: the
  // rest stays verbatim, as deep as a synchronous compaction goes.
  let start = 0;
  let folded = 0;
  while (start < policyStart && folded < foldAtLeast) folded += units[start++]!.tokens;
  return start === 0 ? [] : unpinned.slice(0, units[start]?.start ?? unpinned.length);
}

/** The message the summarizer sees for an entry (its rewrite when it has one). */
function summarizerMessage(entry: ViewEntry, codec: MessageCodec): CompactMessage {
  if (!entry.rewrite) return toCompactMessage(entry.item);
  return { ...codec.parse(entry.wire, entry.item.index), id: entry.item.id, index: entry.item.index };
}

/**
 * The redactor, remembering its answers for one preparation: a message's text is met twice
 * (its parsed text and its raw object), and is scanned once.
 */
function memoized(redact: Redactor | undefined): Redactor | undefined {
  return redact ? memoizeRedactor(redact) : undefined;
}

/** Rejects with `CompactError('aborted')` when `signal` fires first; `work` is not cancelled. */
function untilAborted(work: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return work;
  if (signal.aborted)
    return Promise.reject(
      new CompactError('aborted', 'compaction aborted by the caller', { cause: signal.reason }),
    );
  return new Promise((resolve, reject) => {
    const onAbort = () =>
      reject(new CompactError('aborted', 'compaction aborted by the caller', { cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

/** A store shared with other processes, and how long a preparation's lock is held at most. */
export interface SharedStore {
  readonly store: SessionStore;
  readonly lockTtlMs: number;
}

/** The background preparations of one manager, by session key. */
export class BackgroundPreparations {
  readonly #entries = new Map<string, Preparation>();
  readonly #running = new Set<Preparation>();
  readonly #maxKept: number;
  readonly #shared: SharedStore | undefined;
  #closed = false;
  #started = 0;
  #used = 0;
  #discarded = 0;

  /**
   * `maxKept`: preparations kept at most (the oldest finished ones are dropped first).
   * `shared`: a store shared with other processes: one process prepares per session (under
   * a lock) and publishes the summary there for whichever process compacts at the trigger.
   */
  constructor(maxKept = 1_000, shared?: SharedStore) {
    this.#maxKept = maxKept;
    this.#shared = shared;
  }

  /** Counters and sizes. */
  status(): BackgroundStatus {
    return {
      started: this.#started,
      used: this.#used,
      discarded: this.#discarded,
      running: this.#running.size,
      kept: this.#entries.size,
    };
  }

  /**
   * Starts preparing the next summary of `key` unless one is kept for the view's summary
   * version already. Returns at once: the work starts on a later turn of the event loop.
   */
  start(key: string, request: PreparationRequest): boolean {
    if (this.#closed) return false;
    const existing = this.#entries.get(key);
    if (existing && existing.baseVersion === request.view.version) return false;
    const folded = planPreparation(request.view, request.policy, request.foldAtLeast);
    if (folded.length === 0) return false;
    if (existing) this.#drop(key, existing);
    this.#evict();
    const preparation = this.#launch(key, folded, request);
    this.#entries.set(key, preparation);
    this.#started++;
    return true;
  }

  /** Summarizes `folded` with the fallback chain, its events buffered. */
  #summarize(
    folded: readonly ViewEntry[],
    request: PreparationRequest,
    signal: AbortSignal,
    events: BufferedEvent[],
  ): Promise<SummarizeOutcome | undefined> {
    const { view, policy } = request;
    return summarizeWithFallback(
      {
        ...request.summarize,
        counter: withKnownCounts(request.summarize.counter, folded),
        redact: memoized(request.summarize.redact),
        emit: (name, properties, start) => events.push({ name, properties, start }),
      },
      {
        sessionId: request.sessionId,
        strategy: policy.strategy,
        messages: folded.map((entry) => summarizerMessage(entry, request.codec)),
        maxTokens: policy.maxSummaryTokens,
        ...(view.previousSummary ? { previousSummary: withoutArchiveLine(view.previousSummary) } : {}),
        ...(request.agent ? { agent: request.agent } : {}),
        signal,
      },
      view.nextVersion,
      checkSummaryOutput,
    );
  }

  /** The preparation's work: under the shared lock when the store is shared, then published. */
  async #work(key: string, preparation: Preparation, run: () => Promise<SummarizeOutcome | undefined>) {
    const shared = this.#shared;
    const lock = shared
      ? await shared.store.acquireLock(preparedKey(key), shared.lockTtlMs).catch(() => undefined)
      : undefined;
    // Another process prepares this session: its summary is read from the store at the trigger.
    if (shared && !lock) return;
    try {
      preparation.outcome = await run();
      if (shared && preparation.outcome && !preparation.controller.signal.aborted)
        await publishPrepared(shared.store, key, { ...preparation, outcome: preparation.outcome });
    } finally {
      await lock?.release().catch(() => false);
    }
  }

  #launch(key: string, folded: ViewEntry[], request: PreparationRequest): Preparation {
    const controller = new AbortController();
    const events: BufferedEvent[] = [];
    let kick: () => void = () => {};
    const begun = new Promise<void>((resolve) => {
      kick = resolve;
    });
    const preparation: Preparation = {
      baseVersion: request.view.version,
      foldedIds: folded.map((entry) => entry.item.id),
      foldedHashes: folded.map((entry) => entry.item.entry.hash),
      controller,
      events,
      settled: false,
      outcome: undefined,
      immediate: undefined,
      kick,
      done: begun
        .then(async () => {
          preparation.kick = undefined;
          if (controller.signal.aborted) return;
          await this.#work(key, preparation, () =>
            this.#summarize(folded, request, controller.signal, events),
          );
        })
        .catch(() => {
          preparation.outcome = undefined;
        })
        .finally(() => {
          preparation.settled = true;
          this.#running.delete(preparation);
        }),
    };
    // Off the critical path: the caller's model call goes first.
    preparation.immediate = setImmediate(kick);
    this.#running.add(preparation);
    return preparation;
  }

  /**
   * The prepared summary of `key` when it extends the view's summary and folds a prefix of
   * its messages, waiting for it if it is still running (the wait ends with the caller's
   * `signal`, the preparation goes on). A preparation that no longer fits is discarded.
   * With a shared store, a summary another process prepared is used when this process has
   * none.
   */
  async take(key: string, view: SessionView, signal?: AbortSignal): Promise<PreparedSummary | undefined> {
    const found = this.#entries.get(key);
    const fits = (p: Preparation) =>
      p.baseVersion === view.version && !view.mismatch && coversPrefix(p.foldedIds, p.foldedHashes, view);
    if (found && !fits(found)) this.#drop(key, found);
    const preparation = this.#entries.get(key);
    if (preparation && !preparation.settled) await untilAborted(preparation.done, signal);
    if (preparation && this.#entries.get(key) !== preparation) return undefined;
    if (preparation?.outcome) {
      this.#entries.delete(key);
      this.#used++;
      return { outcome: preparation.outcome, foldedIds: preparation.foldedIds, events: preparation.events };
    }
    let shared = this.#shared ? await readPrepared(this.#shared.store, key, view) : undefined;
    // Another process may be preparing this session right now: its summary is awaited rather
    // than written a second time (within the summarizer's time limit).
    if (!shared && !preparation && this.#shared) shared = await this.#awaitOther(key, view, signal);
    if (preparation) this.#entries.delete(key);
    if (!shared) {
      if (preparation) this.#discarded++;
      return undefined;
    }
    this.#used++;
    return { outcome: shared.outcome, foldedIds: shared.foldedIds, events: [] };
  }

  /**
   * When another process holds `key`'s preparation lock, polls the store for its summary until
   * it is published, the lock is free, `signal` fires or the summarizer's time limit passes
   * (the lock lives twice that, plus 5 s). A probe that gets the lock means nobody prepares.
   */
  async #awaitOther(
    key: string,
    view: SessionView,
    signal?: AbortSignal,
  ): Promise<SharedPrepared | undefined> {
    const { store, lockTtlMs } = this.#shared!;
    const lockFree = async () => {
      const probe = await store.acquireLock(preparedKey(key), 1_000).catch(() => undefined);
      if (probe) await probe.release().catch(() => false);
      return probe !== undefined;
    };
    if (await lockFree()) return undefined;
    const deadline = Date.now() + Math.max(1_000, (lockTtlMs - 5_000) / 2);
    while (Date.now() < deadline && !signal?.aborted) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      const found = await readPrepared(store, key, view);
      if (found) return found;
      if (await lockFree()) return readPrepared(store, key, view);
    }
    return undefined;
  }

  /** Drops the preparation of `key` when it extends a summary older than `version` (or always). */
  discard(key: string, version = Number.POSITIVE_INFINITY): void {
    const preparation = this.#entries.get(key);
    if (preparation && preparation.baseVersion < version) this.#drop(key, preparation);
  }

  /** Aborts every preparation and resolves once none is running; later `start` calls do nothing. */
  async shutdown(): Promise<void> {
    this.#closed = true;
    for (const [key, preparation] of this.#entries) this.#drop(key, preparation);
    const running = [...this.#running];
    for (const preparation of running) this.#abort(preparation);
    await Promise.all(running.map((preparation) => preparation.done));
  }

  #drop(key: string, preparation: Preparation): void {
    this.#entries.delete(key);
    this.#discarded++;
    if (!preparation.settled) this.#abort(preparation);
  }

  #abort(preparation: Preparation): void {
    preparation.controller.abort(new CompactError('aborted', 'the background preparation was discarded'));
    if (preparation.immediate) clearImmediate(preparation.immediate);
    preparation.kick?.();
  }

  /** Keeps at most `maxKept` preparations: the oldest go first. */
  #evict(): void {
    while (this.#entries.size >= this.#maxKept) {
      const [key, oldest] = this.#entries.entries().next().value as [string, Preparation];
      this.#drop(key, oldest);
    }
  }
}

/** A previous summary without its trailing archive line (the new summary gets a fresh one). */
function withoutArchiveLine(summary: string): string {
  return summary.replace(/\n?Archived originals: recall ref [^\n]*$/, '');
}
