/**
 * Background preparation (manager option `background: true`): once a session's request
 * passes `policy.prepareAtPct`, the older part of its view (everything before the policy's
 * verbatim window) is summarized off the critical path. When the trigger fires, the
 * prepared summary is swapped in if it still covers a prefix of the view (same summary
 * version, same message ids and contents, none of them pinned since); the messages after it
 * stay verbatim, or go through the cheap cascade levels. Otherwise the preparation is
 * discarded and the cascade runs as without background.
 *
 * One preparation per session key and branch (single flight: the state it extends and a fold
 * that fits the view; a session's forks each have theirs, `preparation-branches.ts`);
 * a preflight that waits on one and is aborted leaves it running for the next caller;
 * `shutdown` aborts them all and waits until none is left.
 */

import type { PreparedSummary } from '../preflight/cascade/prepared-summary.js';
import type { SessionView, ViewEntry } from '../preflight/view/session-view.js';
import type { PreparationQueue } from '../queues/preparation-queue.js';
import type { SessionLock, SessionState } from '../session/session-store.js';
import { awaitOtherPreparation, claimOrAwait } from './await-other-preparation.js';
import type { BackgroundOptions, BackgroundStatus, SharedStore } from './background-status.js';
import { branchClaimKey } from './branch-prepared.js';
import { DEADLINE_MARGIN, LeadTime, type PreparationThreshold } from './lead-time.js';
import {
  abortPreparation,
  type Preparation,
  preparationFits,
  startPreparation,
  summarizeUnderLock,
} from './preparation.js';
import { PreparationBranches } from './preparation-branches.js';
import { type PreparationRequest, planPreparation, queueJob, untilAborted } from './preparation-plan.js';
import { QueueBacklog } from './queue-backlog.js';
import { readPrepared } from './shared-preparation.js';
import { summarizePreparation } from './summarize-preparation.js';

export type { BufferedEvent, PreparedSummary } from '../preflight/cascade/prepared-summary.js';
export type { BackgroundOptions, BackgroundStatus, SharedStore } from './background-status.js';
export type { PreparationThreshold } from './lead-time.js';
export { MAX_BRANCHES_KEPT } from './preparation-branches.js';
export { type PreparationRequest, planPreparation } from './preparation-plan.js';
export type { BacklogInfo } from './queue-backlog.js';

/** The background preparations of one manager, by session key (a few per key: its forks'). */
export class BackgroundPreparations {
  readonly #kept: PreparationBranches;
  readonly #running = new Set<Preparation>();
  readonly #shared: SharedStore | undefined;
  readonly #queue: PreparationQueue | undefined;
  readonly #lead = new LeadTime();
  readonly #learn: boolean;
  readonly #backlog: QueueBacklog | undefined;
  /** Preparation claims held by triggers compacting without a prepared summary (queue only). */
  readonly #claims = new Map<string, SessionLock>();
  #lastThreshold: PreparationThreshold | undefined;
  #tooLate = 0;
  #closed = false;
  #started = 0;
  #used = 0;
  #discarded = 0;
  #summarized = 0;
  #queued = 0;

  /**
   * `maxKept`: preparations kept at most (the oldest finished ones are dropped first).
   * `shared`: a store shared with other processes: one process prepares per session (under
   * a lock) and publishes the summary there for whichever process compacts at the trigger.
   * `queue`: preparations become jobs of that queue (a worker summarizes and publishes them in
   * `shared.store`); the trigger uses a published summary when one fits and never waits.
   */
  constructor(
    maxKept = 1_000,
    shared?: SharedStore,
    queue?: PreparationQueue,
    options: BackgroundOptions = {},
  ) {
    this.#kept = new PreparationBranches(maxKept);
    this.#shared = shared;
    this.#queue = queue;
    // In-process preparations are awaited at the trigger: only a queue's need a lead time.
    this.#learn = options.lead !== 'fixed' && queue !== undefined;
    this.#backlog = queue ? new QueueBacklog(this.#lead, queue.name, options.onBacklog) : undefined;
  }

  /**
   * Records a call of `key` (its growth) and says where its next preparation starts:
   * `fixed` (`policy.prepareAtPct` of the window) until the lead time and the session's
   * growth are learned, or always with `lead: 'fixed'`.
   */
  threshold(
    key: string,
    at: { version: number; tokens: number; now: number; trigger: number; floor: number; fixed: number },
  ): PreparationThreshold {
    this.#lead.recordCall(key, at.version, at.tokens, at.now);
    if (!this.#learn) return { tokens: at.fixed, basis: 'fixed' };
    return this.#lead.threshold(key, at.trigger, at.floor, at.fixed);
  }

  /**
   * True when a preparation of `key` for `version` would start now (none kept for it) but
   * could not be ready before the trigger (counted as `tooLate`; never with `lead: 'fixed'`).
   */
  tooLate(key: string, version: number, tokens: number, trigger: number): boolean {
    if (!this.#learn || this.#kept.of(key).some((p) => p.baseVersion === version)) return false;
    if (!this.#lead.tooLate(key, tokens, trigger)) return false;
    this.#tooLate++;
    return true;
  }

  /**
   * With a queue: when `key`, at `tokens`, likely reaches `trigger` at its pace (epoch ms, as
   * the workers' clocks): `dueAt`, and `deadline` with {@link DEADLINE_MARGIN}; else `undefined`.
   */
  deadline(key: string, tokens: number, trigger: number): { deadline: number; dueAt: number } | undefined {
    if (!this.#queue) return undefined;
    const ms = this.#lead.expectedUntilTrigger(key, tokens, trigger);
    if (ms === undefined) return undefined;
    const now = Date.now();
    return { deadline: Math.round(now + ms * DEADLINE_MARGIN), dueAt: Math.round(now + ms) };
  }

  /** Tells the queue the newer due time of this process's queued job of `key` for `view`. */
  reschedule(key: string, view: SessionView, dueAt: number): void {
    const entry = this.#kept.of(key).find((p) => preparationFits(p, view));
    if (!entry || entry.queuedAt === undefined || entry.unwanted) return;
    this.#queue?.reschedule?.(key, view.version, dueAt, entry.fold).catch(() => {});
  }

  /** Counters and sizes. */
  status(): BackgroundStatus {
    return {
      started: this.#started,
      used: this.#used,
      discarded: this.#discarded,
      running: this.#running.size,
      kept: this.#kept.size,
      summarized: this.#summarized,
      queued: this.#queued,
      tooLate: this.#tooLate,
      ...(this.#backlog?.status() ?? { late: 0, backlogEpisodes: 0, backlog: false }),
      queueLatencyMs: this.#lead.latencyMs(),
      leadTimeMs: this.#lead.leadMs(),
      lastThreshold: this.#lastThreshold,
    };
  }

  /**
   * Starts preparing the next summary of `key` unless one kept fits the view (its state, a
   * prefix of its messages). Preparations of `key` whose branch moved on are dropped (their
   * jobs withdrawn); another fork's stay. Returns at once: the work starts on a later turn of
   * the event loop.
   */
  start(key: string, request: PreparationRequest, threshold?: PreparationThreshold): boolean {
    if (this.#closed) return false;
    if (this.#kept.of(key).some((p) => preparationFits(p, request.view))) return false;
    const folded = planPreparation(request.view, request.policy, request.foldAtLeast);
    if (folded.length === 0) return false;
    this.#dropMovedOn(key, request.view.state);
    for (const [crowded, oldest] of this.#kept.crowded(key)) this.#drop(crowded, oldest);
    const work = (p: Preparation) => this.#work(key, folded, request, p);
    // Running until it settles; its work starts on a later turn of the event loop.
    const preparation = startPreparation(request.view, folded, work, (p) => this.#running.delete(p));
    this.#running.add(preparation);
    this.#kept.add(key, preparation);
    this.#started++;
    if (threshold) this.#lastThreshold = threshold;
    return true;
  }

  /** The preparation's work: a queue's job, or summarized here (under the shared lock when the store is shared, then published). */
  async #work(
    key: string,
    folded: ViewEntry[],
    request: PreparationRequest,
    preparation: Preparation,
  ): Promise<void> {
    const { controller, events } = preparation;
    if (this.#queue) {
      const job = await queueJob(key, folded, request, preparation.fold);
      if (controller.signal.aborted) return;
      await this.#queue.enqueue(job);
      preparation.queuedAt = job.enqueuedAt;
      this.#queued++;
      // Dropped as unwanted while its add was on the way: the job is taken back now.
      if (preparation.unwanted) this.#withdraw(key, preparation);
    } else
      await summarizeUnderLock(
        this.#shared,
        key,
        preparation,
        () => summarizePreparation(folded, request, controller.signal, events),
        () => this.#summarized++,
      );
  }

  /**
   * The prepared summary of `key` when it extends the view's summary and folds a prefix of
   * its messages, waiting for it if it is still running (the wait ends with the caller's
   * `signal`, the preparation goes on). A preparation that no longer fits is discarded.
   * With a shared store, a summary another process prepared is used when this process has
   * none.
   */
  async take(key: string, view: SessionView, signal?: AbortSignal): Promise<PreparedSummary | undefined> {
    // Those whose branch moved on go (another fork's stay for it).
    this.#dropMovedOn(key, view.state, (p) => !preparationFits(p, view));
    const preparation = this.#kept.of(key).find((p) => preparationFits(p, view));
    // A queued preparation is summarized elsewhere: awaited only while a worker runs it (below).
    if (preparation && !preparation.settled && !this.#queue) await untilAborted(preparation.done, signal);
    if (preparation && !this.#kept.of(key).includes(preparation)) return undefined;
    if (preparation?.outcome) {
      this.#kept.remove(key, preparation);
      this.#used++;
      return { outcome: preparation.outcome, foldedIds: preparation.foldedIds, events: preparation.events };
    }
    // A queued job of this version tells, at its trigger, how long the queue takes.
    const queuedAt = preparation?.queuedAt;
    const observer = queuedAt === undefined ? undefined : this.#backlog?.observer(key, queuedAt);
    let shared = this.#shared
      ? await readPrepared(this.#shared.store, key, view, this.#shared.signing, observer?.seen)
      : undefined;
    // Another process may be preparing this session right now: its summary is awaited rather
    // than written a second time (within the summarizer's time limit).
    if (!shared && !preparation && this.#shared && !this.#queue)
      shared = await awaitOtherPreparation(this.#shared, key, view, signal);
    // With a queue: a worker summarizing this version now is awaited; else the version is
    // claimed, so no worker starts its job while this trigger compacts it (issue 46).
    let claimed = false;
    if (!shared && this.#shared && this.#queue && !this.#closed) {
      const wait = {
        maxWaitMs: this.#runningWaitMs(),
        // The claim of this process's job's fold (its worker holds it while it runs), else the session's.
        ...(preparation ? { lock: branchClaimKey(key, preparation.fold) } : {}),
        ...(observer ? { seen: observer.seen } : {}),
      };
      const outcome = await claimOrAwait(this.#shared, key, view, signal, wait);
      shared = outcome.found;
      if (outcome.claim) {
        this.release(key);
        this.#claims.set(key, outcome.claim);
        claimed = true;
      }
    }
    observer?.end();
    if (preparation) this.#kept.remove(key, preparation);
    if (!shared) {
      if (preparation) {
        this.#discarded++;
        // The trigger compacts without it: a job still waiting is taken out of the queue.
        this.#withdraw(key, preparation);
      } else if (claimed)
        // Another process's job of this version (its id is the same everywhere) is taken back too.
        this.#queue?.withdraw?.(key, view.version).catch(() => {});
      return undefined;
    }
    this.#used++;
    return { outcome: shared.outcome, foldedIds: shared.foldedIds, events: [] };
  }

  /**
   * Drops the preparation of `key` when it extends a summary older than `version` (the session
   * moved past it: its job is withdrawn from the queue while it still waits), or always
   * (`endSession`, `reset`), its job withdrawn when `withdraw` (the session is over or reset:
   * nothing will use it), else kept for another process that may still serve the session.
   */
  discard(
    key: string,
    version = Number.POSITIVE_INFINITY,
    withdraw = version !== Number.POSITIVE_INFINITY,
  ): void {
    const own = this.#kept.of(key);
    for (const preparation of own)
      if (preparation.baseVersion < version) this.#drop(key, preparation, withdraw);
    if (version !== Number.POSITIVE_INFINITY) return;
    // Over: the job of its latest version is taken back even when another process of the fleet
    // enqueued it (its id is the same everywhere; that process's threshold came sooner).
    const latest = this.#lead.version(key);
    if (withdraw && latest !== undefined && !own.some((p) => p.baseVersion === latest))
      this.#queue?.withdraw?.(key, latest).catch(() => {});
    this.#lead.forget(key);
  }

  /**
   * After a compaction of `key` stored `state`: the preparations whose branch moved on are
   * dropped and their jobs withdrawn (another fork's stay, see `branchMovedOn`).
   */
  compacted(key: string, state: SessionState): void {
    this.#dropMovedOn(key, state);
  }

  /**
   * Frees the queue's jobs of `key` for versions 0 to `version` (its stored version at a
   * `reset`), finished ones included: the conversation that reuses the session id gets jobs of
   * its own. Resolves once the queue answered; a failure is ignored.
   */
  async forget(key: string, version: number): Promise<void> {
    await this.#queue?.forget?.(key, version).catch(() => {});
  }

  /**
   * How long a trigger waits for a worker summarizing its version: twice the queue's p90
   * latency (enqueue to publish, which a run alone does not exceed), at least a second;
   * before any latency was learned, the summarizer's time limit.
   */
  #runningWaitMs(): number {
    const latency = this.#lead.latencyMs();
    return latency === undefined ? Number.POSITIVE_INFINITY : Math.max(1_000, 2 * latency);
  }

  /**
   * Ends the preparation claim the trigger of `key` took in {@link take} (never awaited): its
   * compaction is over, stored or not, and the session's next job may run.
   */
  release(key: string): void {
    const claim = this.#claims.get(key);
    if (!claim) return;
    this.#claims.delete(key);
    claim.release().catch(() => false);
  }

  /** Aborts every preparation and resolves once none is running; later `start` calls do nothing. */
  async shutdown(): Promise<void> {
    this.#closed = true;
    for (const key of [...this.#claims.keys()]) this.release(key);
    for (const [key, preparation] of this.#kept.all()) this.#drop(key, preparation);
    const running = [...this.#running];
    for (const preparation of running) abortPreparation(preparation);
    await Promise.all(running.map((preparation) => preparation.done));
  }

  /** `stale`: nothing will use the preparation (the session moved past its version, or is over): its job is withdrawn. */
  #drop(key: string, preparation: Preparation, stale = false): void {
    this.#kept.remove(key, preparation);
    this.#discarded++;
    if (!preparation.settled) abortPreparation(preparation);
    if (stale) this.#withdraw(key, preparation);
  }

  /**
   * Takes `preparation`'s job out of the queue if it still waits there (never awaited). Only
   * for a version the session moved past or a session ended here (`endSession`, `reset`): on
   * shutdown, another process may still use a live one's summary.
   */
  #withdraw(key: string, preparation: Preparation): void {
    preparation.unwanted = true;
    if (preparation.queuedAt === undefined || !this.#queue?.withdraw) return;
    this.#queue.withdraw(key, preparation.baseVersion, preparation.fold).catch(() => {});
  }

  /** Drops (withdraws) the preparations of `key` whose branch moved on in `record` and that `only` allows. */
  #dropMovedOn(key: string, record: SessionState | undefined, only = (_p: Preparation) => true): void {
    for (const p of this.#kept.movedOn(key, record, only)) this.#drop(key, p, true);
  }
}
