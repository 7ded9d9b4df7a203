/**
 * The manager's view of its session store: a store fault (an operation that throws or
 * exceeds a short time limit) never fails a call. Reads fall back to the state this process
 * last saw or wrote for the session (or a version floor from the archive, version-floors.ts),
 * writes that keep the version are kept and written when the store answers again (last state
 * wins, still a compare-and-set on the version the store last had), a write that claims a new
 * version is refused (only the store grants versions: the caller answers locally,
 * `SessionState.local`), and a lock the store cannot give is taken in this process only (the
 * manager's per-session queue still serializes its own calls). One outage is
 * reported once, through `onOutage`, however many calls it touches, and its end once, through
 * `onRecovery`, with the number of calls it affected.
 *
 * The time limit bounds a whole call, not each operation: every operation of a manager call
 * ({@link FailOpenStore.within}) draws on one budget of `timeoutMs`, locks' renewals and
 * releases included, so a call never waits on the store longer than that in total, whatever
 * the store does (a stalled server answers nothing and holds every client's commands).
 * Waiting is the time the event loop sits idle meanwhile; time this process spends busy is
 * its own (see `idleTimeLimit`).
 */
import { isCompactError } from '../errors.js';
import { packState } from '../session/packed-state.js';
import type { SessionState, SessionStoreSetOptions } from '../session/session-state.js';
import type { SessionLock, SessionStore } from '../session/session-store.js';
import { storedStateProblem } from '../session/session-store-checks.js';
import { stateBytes } from '../session/state-bytes.js';
import type { FailOpenStoreOptions } from './fail-open-options.js';
import { type CallBudget, waitWithin } from './idle-time-limit.js';
import { packingStore } from './packing-store.js';
import { ReadRevisions, type RevisedRead } from './read-revisions.js';
import { StoreCalls, StoreFault } from './store-calls.js';
import { boundedLock, localLock, UnreleasedLocks } from './store-locks.js';
import { type StoreWrites, VersionFloors, writeBack, writeFloor } from './version-floors.js';

export type { FailOpenStoreOptions } from './fail-open-options.js';

/** The default time limit of one store operation, in milliseconds. */
export const DEFAULT_STORE_TIMEOUT_MS = 500;

/**
 * A write the store missed: the state to write (undefined: a delete), and the JSON of the
 * state the store had as far as this process knew when the first of them was kept.
 */
interface PendingWrite {
  state: SessionState | undefined;
  base?: string;
}

/** A state's JSON in its stored form (packed-state.ts): a long state reads back with its rewrites' fields in another order. */
function storedJson(state: SessionState | null | undefined): string {
  return JSON.stringify(state ? packState(state) : null);
}

/** Wraps the manager's store so that its faults never fail a call (see the file comment). */
export class FailOpenStore implements SessionStore {
  readonly name: string;
  readonly inner: SessionStore;
  /** `inner` as this store reads and writes states: long ones packed (packed-state.ts). */
  readonly #store: SessionStore;
  readonly #options: FailOpenStoreOptions;
  /** The state this process last saw or wrote, per key (null: known to have none). */
  readonly #local = new Map<string, SessionState | null>();
  /** The version the store last had, per key, as far as this process knows. */
  readonly #storedVersion = new Map<string, number>();
  readonly #pending = new Map<string, PendingWrite>();
  /** What this process read and checked, by the store's revision (read-revisions.ts). */
  readonly #revisions = new ReadRevisions();
  /**
   * Local answers kept while the store is down (`SessionState.local`): served by `get` until
   * the store answers, never written to it.
   */
  readonly #localAnswers = new Map<string, SessionState>();
  /** The archive's version floors of sessions (see `FailOpenStoreOptions.floor`). */
  readonly #floors: VersionFloors;
  /** Outages and call budgets: every store operation runs through it. */
  readonly #calls: StoreCalls;
  #flushing: Promise<void> | undefined;
  #localTokens = 0;
  readonly #unreleased = new UnreleasedLocks();

  constructor(inner: SessionStore, options: FailOpenStoreOptions) {
    this.inner = inner;
    this.#store = packingStore(inner);
    this.name = inner.name;
    this.#options = options;
    this.#floors = new VersionFloors(options.floor, options.timeoutMs);
    this.#calls = new StoreCalls(inner.name, options, (key, affected) => this.#recovered(key, affected));
  }

  /** True while the store is considered down. */
  get down(): boolean {
    return this.#calls.down;
  }

  /** Lets the next operation try the store at once, even within the cool-down after a fault. */
  retryNow(): void {
    this.#calls.retryNow();
  }

  /** Writes kept for when the store answers again. */
  get pendingWrites(): number {
    return this.#pending.size;
  }

  /** In-process copies of stored states held. */
  get size(): number {
    return this.#local.size;
  }

  /** Approximate bytes of the in-process copies. */
  get bytes(): number {
    let total = 0;
    for (const state of this.#local.values()) total += stateBytes(state ?? undefined);
    return total;
  }

  /** Forgets what this process keeps of a session but its pending write, and its copy while a call of it runs (read anew, the summary that call archived would be a floor). */
  forget(key: string): void {
    this.#localAnswers.delete(key);
    if (this.#pending.has(key) || this.#calls.budget(key)) return;
    this.#local.delete(key);
    this.#storedVersion.delete(key);
    this.#revisions.forget(key);
  }

  /** A summary of `version` was archived, then its state refused by a store fault: lifted to once the store answers. */
  archivedUnstored(key: string, version: number): void {
    this.#floors.serve(key, version);
  }

  /**
   * Keeps a local answer's state (`SessionState.local`) while the store is down, so that the
   * next calls extend it instead of summarizing again; never written to the store, replaced by
   * the store's state once it answers. Ignored while the store is up (the next call reads it).
   */
  keepLocal(key: string, state: SessionState): void {
    if (!this.#calls.down || state.local !== true) return;
    this.#localAnswers.set(key, JSON.parse(JSON.stringify(state)) as SessionState);
  }

  /** Forgets everything but pending writes. */
  clear(): void {
    for (const key of [...this.#local.keys()]) this.forget(key);
  }

  /** Runs one manager call of session `key`: its store operations share one budget of `timeoutMs`. */
  async within<T>(key: string, run: () => Promise<T>): Promise<T> {
    return this.#calls.within(key, run);
  }

  /** Runs one store operation under the call's budget (see {@link StoreCalls.call}). */
  #call<T>(
    key: string,
    operation: () => Promise<T>,
    budget?: CallBudget,
    free?: (value: T) => boolean,
  ): Promise<T> {
    return this.#calls.call(key, operation, budget ?? this.#calls.budget(key), free);
  }

  #recovered(key: string, affected: number): void {
    this.#floors.outageEnded();
    this.#options.onRecovery?.(key, affected);
    if (this.#pending.size > 0) void this.#flush();
  }

  #flush(budget?: CallBudget): Promise<void> {
    this.#flushing ??= this.flushPending(budget).finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  /** Before an operation of `key`: writes kept during an outage go first, when the store may be back. */
  async #catchUp(key: string): Promise<void> {
    const coolingDown = this.#calls.coolingDown;
    const budget = this.#calls.budget(key);
    // A flush started by another call runs on that call's budget: wait for it on ours.
    if (this.#flushing) await waitWithin(this.#flushing, budget);
    else if (this.#pending.size > 0 && !coolingDown) await this.#flush(budget).catch(() => {});
  }

  /**
   * Writes the states kept during an outage, last state wins: a kept state is written (a
   * compare-and-set on the version the store has now) unless the store already holds a newer
   * version, or another state at that version, written by another process meanwhile, which is
   * then adopted. A store that came back empty (restarted without persistence) gets it.
   */
  async flushPending(budget?: CallBudget): Promise<void> {
    for (const [key, pending] of [...this.#pending]) {
      this.#pending.delete(key);
      try {
        if (pending.state === undefined) {
          await this.#call(key, () => this.#store.delete(key), budget);
          this.#storedVersion.delete(key);
          continue;
        }
        const state = pending.state;
        const current = await this.#call(key, () => this.#store.get(key), budget);
        const currentVersion = current?.version ?? 0;
        // Kept writes keep the version the store last had (a new one is refused meanwhile):
        // written over that version too while the store holds what this process knew, not
        // only over an older one (a store that lost it).
        const written =
          (currentVersion < state.version ||
            (currentVersion === state.version && storedJson(current) === pending.base)) &&
          (await this.#call(
            key,
            () => this.#store.set(key, state, { expectedVersion: currentVersion }),
            budget,
          ));
        if (written) {
          this.#storedVersion.set(key, state.version);
        } else {
          // Another process moved the session meanwhile: its state wins.
          this.#local.delete(key);
          this.#storedVersion.delete(key);
        }
      } catch (error) {
        if (!(error instanceof StoreFault)) throw error;
        if (!this.#pending.has(key)) this.#pending.set(key, pending);
        return;
      }
    }
  }

  /** Waits for a flush of pending writes in progress. */
  async settled(): Promise<void> {
    await this.#flushing;
  }

  /**
   * At shutdown: one last try to write what is pending, within one budget of `timeoutMs`
   * (never longer, whatever the store does); what does not make it stays unwritten.
   */
  async shutdown(): Promise<void> {
    const budget: CallBudget = { leftMs: this.#options.timeoutMs, affected: false };
    const coolingDown = this.#calls.coolingDown;
    const flush = this.#pending.size > 0 && !coolingDown ? this.#flush(budget) : this.#flushing;
    await waitWithin(
      flush?.catch(() => {}),
      budget,
    );
  }

  async get(sessionId: string): Promise<SessionState | undefined> {
    await this.#catchUp(sessionId);
    const local = this.#localAnswers.get(sessionId) ?? this.#local.get(sessionId);
    // A session new to this process: the archive's floor is read beside the store's state, which may be older (a store restored from an older dump).
    const floor = this.#local.has(sessionId) ? undefined : this.#floors.archived(sessionId);
    // Writes of this session wait for the store: its copy stands, unless the archive knows a
    // newer version (another process reached the store meanwhile).
    if (this.#pending.has(sessionId)) return this.#floors.duringOutage(sessionId, local ?? undefined);
    try {
      const read = await this.#revisions
        .read(this.#store, sessionId, this.#local.get(sessionId), (run) => this.#call(sessionId, run))
        .catch((error: unknown) => this.#corrupt(sessionId, error));
      let state = read.state;
      const problem = state === undefined || read.checked ? undefined : storedStateProblem(state);
      if (problem !== undefined) {
        state = undefined;
        await this.#call(sessionId, () => this.#store.delete(sessionId)).catch(() => {});
        this.#options.onCorrupt?.(
          sessionId,
          `the stored state of session ${JSON.stringify(sessionId)} ${problem}; it was deleted and the session starts over`,
        );
      }
      this.#localAnswers.delete(sessionId);
      const known = this.#storedVersion.get(sessionId);
      if (known !== undefined && (state?.version ?? 0) < known) state = await this.#restore(sessionId, state);
      else if (floor !== undefined) state = await this.#resumeFloor(sessionId, await floor, state);
      const served = this.#floors.takeServed(sessionId);
      // This process answered above the store's version during an outage: lifted, never down.
      if (served !== undefined && (state?.version ?? 0) < served)
        state = await this.#resumeFloor(sessionId, served, state);
      this.#local.set(sessionId, state ?? null);
      if (state) this.#storedVersion.set(sessionId, state.version);
      else this.#storedVersion.delete(sessionId);
      this.#revisions.keep(sessionId, read, state);
      return state;
    } catch (error) {
      if (error instanceof StoreFault) return this.#floors.duringOutage(sessionId, local ?? undefined);
      throw error;
    }
  }

  /** A state the store found corrupt (`corrupt_state`) reads as none: resumed from this process's copy or the archive's floor, never at v1. */
  #corrupt(sessionId: string, error: unknown): RevisedRead {
    if (!isCompactError(error, 'corrupt_state')) throw error;
    this.#options.onCorrupt?.(sessionId, error.message);
    return { state: undefined, checked: true };
  }

  /** Writes a state at a version floor over `found` (see {@link writeFloor}). */
  #resumeFloor(sessionId: string, version: number | undefined, found: SessionState | undefined) {
    return writeFloor(this.#writes(sessionId), version, found, () =>
      this.#options.onFloor?.(sessionId, version ?? 0),
    );
  }

  /**
   * The store holds an older version (or none) than this process saw it hold: it lost its data.
   * This process's copy is written back (see {@link writeBack}), with one `onLost`, and lifted
   * to the archive's floor when others sent newer versions since this process's copy.
   */
  async #restore(sessionId: string, found: SessionState | undefined): Promise<SessionState | undefined> {
    const known = this.#storedVersion.get(sessionId) ?? 0;
    const current = await writeBack(this.#writes(sessionId), this.#local.get(sessionId) ?? undefined, found);
    this.#options.onLost?.(sessionId, known, found?.version ?? 0);
    return this.#resumeFloor(sessionId, await this.#floors.archived(sessionId), current);
  }

  /** The store's `get` and compare-and-set of one session, under the call's budget. */
  #writes(sessionId: string): StoreWrites {
    return {
      sessionId,
      get: () => this.#call(sessionId, () => this.#store.get(sessionId)),
      set: (state, expectedVersion) =>
        this.#call(sessionId, () => this.#store.set(sessionId, state, { expectedVersion })),
    };
  }

  async set(sessionId: string, state: SessionState, options: SessionStoreSetOptions = {}): Promise<boolean> {
    // A local answer is never written (see `keepLocal`).
    if (state.local === true) return false;
    const { fencingToken, ...rest } = options;
    // A token of a lock taken in this process only fences nothing in the store.
    const forwarded = fencingToken !== undefined && fencingToken < 0 ? rest : options;
    await this.#catchUp(sessionId);
    if (!this.#pending.has(sessionId)) {
      try {
        const written = await this.#call(sessionId, () => this.#store.set(sessionId, state, forwarded));
        if (written) {
          this.#local.set(sessionId, JSON.parse(JSON.stringify(state)) as SessionState);
          this.#storedVersion.set(sessionId, state.version);
        }
        return written;
      } catch (error) {
        if (!(error instanceof StoreFault)) throw error;
      }
    }
    // The store is down (or has writes of this session pending): the write is kept, unless it
    // claims a new version: no process can claim one the store has not granted (another may
    // claim the same one meanwhile), so the caller answers locally instead (SessionState.local).
    const local = this.#local.get(sessionId) ?? undefined;
    if (options.expectedVersion !== undefined && (local?.version ?? 0) !== options.expectedVersion)
      return false;
    if (state.version > (local?.version ?? 0)) return false;
    const copy = JSON.parse(JSON.stringify(state)) as SessionState;
    const base = this.#pending.get(sessionId)?.base ?? storedJson(local);
    this.#local.set(sessionId, copy);
    this.#pending.set(sessionId, { state: copy, base });
    return true;
  }

  async delete(sessionId: string): Promise<void> {
    await this.#catchUp(sessionId);
    try {
      await this.#call(sessionId, () => this.#store.delete(sessionId));
      this.#pending.delete(sessionId);
      this.#local.delete(sessionId);
      this.#storedVersion.delete(sessionId);
    } catch (error) {
      if (!(error instanceof StoreFault)) throw error;
      this.#local.set(sessionId, null);
      this.#pending.set(sessionId, { state: undefined });
    }
  }

  async acquireLock(sessionId: string, ttlMs: number): Promise<SessionLock | undefined> {
    await this.#catchUp(sessionId);
    let asked: Promise<SessionLock | undefined> | undefined;
    try {
      await this.#unreleased.releaseFirst(sessionId, (release) => this.#call(sessionId, release));
      // Polls finding the lock taken answer at once; the wait for it has its own time limit.
      const lock = await this.#call(
        sessionId,
        () => (asked = this.#store.acquireLock(sessionId, ttlMs)),
        undefined,
        (taken) => taken === undefined,
      );
      if (!lock) return undefined;
      // Renewals run beside the call's work (a summarizer): an answered one costs it nothing.
      const call = <T>(operation: () => Promise<T>, free?: (value: T) => boolean) =>
        this.#call(sessionId, operation, undefined, free).catch((error: unknown) => {
          if (error instanceof StoreFault) return undefined;
          throw error;
        });
      return boundedLock(lock, call, this.#unreleased);
    } catch (error) {
      if (!(error instanceof StoreFault)) throw error;
      // An acquire given up on may still land (a stalled server answers its queued commands when
      // it resumes): that lock is nobody's, released at once rather than left for its time to live.
      void asked?.then((late) => late?.release()).catch(() => false);
      // The manager's queue serializes this process's calls of the session; other processes
      // are fenced by the compare-and-set when the kept write reaches the store.
      return localLock(sessionId, -++this.#localTokens);
    }
  }
}
