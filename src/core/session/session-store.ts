/**
 * Per-session compaction state, behind a small store interface: in memory by default,
 * shared (Redis, ...) when several processes serve one session.
 *
 * The contract every backend keeps (checked by `describeSessionStoreConformance` from
 * `agent-compaction/testing/conformance`):
 *
 * - `get` returns what the last successful `set` wrote (a JSON round trip of it), or
 *   `undefined`; a caller can never change stored state through an object it passed in or got.
 * - `set` with `expectedVersion` is a compare-and-set on `SessionState.version` (`0` means
 *   "no state yet"); with `fencingToken` it is refused once a newer lock than that token was
 *   issued for the session. Both checks and the write are one atomic step.
 * - `acquireLock` gives at most one holder per session at a time; the lock lapses after its
 *   time to live unless renewed, so a crashed holder blocks nobody longer than that; every
 *   lock carries a fencing token greater than every token issued before for that session
 *   (also across `delete`).
 */

import { clock } from '../clock.js';
import { runStepsYielding } from '../time-slice.js';
import { deepFreezeSteps, isLargeState, jsonCopySteps } from './json-copy.js';
import { unpackState, valuesToFreeze } from './packed-state.js';
import type { SessionState, SessionStoreSetOptions } from './session-state.js';
import { checkSessionId, checkState, checkTtl, checkWriteOptions } from './session-store-checks.js';

export type {
  HistoryAnchor,
  PackedList,
  PackedLists,
  SessionRewrite,
  SessionState,
  SessionStoreSetOptions,
  SessionSummary,
} from './session-state.js';

/**
 * A held lock on one session, from {@link SessionStore.acquireLock}. It lapses after its
 * time to live unless renewed.
 */
export interface SessionLock {
  /** The locked session. */
  readonly sessionId: string;
  /**
   * The fencing token: a positive integer greater than every token issued before for this
   * session by this store (shared by all processes using it). Pass it as
   * {@link SessionStoreSetOptions.fencingToken} on the writes made under the lock.
   */
  readonly token: number;
  /**
   * Extends the lock to `ttlMs` from now (default: the time to live it was acquired with).
   * Resolves `false` when the lock is lost: released, or a newer lock was issued after it
   * lapsed. A lapsed lock that nobody took meanwhile is revived.
   */
  renew(ttlMs?: number): Promise<boolean>;
  /** Releases the lock; resolves `false` when it was no longer held. Safe to call twice. */
  release(): Promise<boolean>;
}

/** What {@link SessionStore.getIfChanged} answers. */
export interface RevisedState {
  /** The stored state's revision now. */
  revision: string;
  /** True when the revision is the one asked about: `state` is then left out. */
  unchanged?: boolean;
  /** The stored state (absent: none, or `unchanged`). */
  state?: SessionState;
}

/**
 * Holds {@link SessionState} by session id, and a lock per session with expiry and a fencing
 * token so that processes sharing the store compact a session once per trigger.
 *
 * A new backend (Postgres, DynamoDB, ...) implements these five members and runs
 * `describeSessionStoreConformance` from `agent-compaction/testing/conformance` against a real server.
 * The natural mapping is one row/item per session with the columns `state` (JSON),
 * `version`, `fence` (the last token issued), `lock_token` and `lock_until`, each method one
 * conditional statement: a `WHERE version = $expected AND $token >= fence` update, or a
 * `ConditionExpression` in DynamoDB. Take the lock's clock from the server, not the caller.
 */
export interface SessionStore {
  /** A short name for diagnostics. */
  readonly name: string;
  /** The stored state of a session, or `undefined` when there is none. */
  get(sessionId: string): Promise<SessionState | undefined>;
  /**
   * Stores `state`; resolves `false` (nothing written) when `expectedVersion` did not match or
   * `fencingToken` is older than the session's newest lock.
   */
  set(sessionId: string, state: SessionState, options?: SessionStoreSetOptions): Promise<boolean>;
  /** Forgets a session's state (a held lock stays, and no token issued before is issued again). */
  delete(sessionId: string): Promise<void>;
  /**
   * Takes the session's lock for `ttlMs` milliseconds, or resolves `undefined` at once when
   * another holder has it and it has not lapsed. To wait for it, see `waitForSessionLock`.
   */
  acquireLock(sessionId: string, ttlMs: number): Promise<SessionLock | undefined>;
  /**
   * The stored state with its revision, or only the revision when it is still `revision`
   * (nothing was written or deleted since the read that returned it). Optional: a store that
   * has it spares the manager's calls of a session read and checked before (a process that
   * resumed it from the store) the full read and check of its state while no other process
   * writes it. The revision is an opaque string that changes on every write and delete of the
   * session's state, by any process.
   */
  getIfChanged?(sessionId: string, revision?: string): Promise<RevisedState>;
  /**
   * Closes what the store opened itself (a connection it made from a URL; never a client it
   * was given). `CompactManager.shutdown()` calls it. A store used after `close` may open
   * again. Optional.
   */
  close?(): Promise<void>;
}

interface MemoryEntry {
  state?: SessionState;
  /**
   * The last fencing token issued for the session; for an entry made without a lock, the
   * store's counter when it was made (no token issued before is newer than that).
   */
  fence: number;
  /** The current holder's token, and when it lapses (ms on the monotonic `clock`). */
  lock?: { token: number; until: number };
}

/** Returns `value` with every object and array in it frozen. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    // An unpacked state's lists not read yet stay packed (frozen when read: packed-state.ts).
    for (const child of valuesToFreeze(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The default store: a `Map` in this process (state, locks and fencing tokens). Stored
 * states are deep-frozen copies, so `get` returns them without copying.
 *
 * @example
 * ```ts
 * const manager = new CompactManager({ model: 'gpt-4o', store: new MemorySessionStore() });
 * ```
 */
export class MemorySessionStore implements SessionStore {
  readonly name = 'memory';
  readonly #entries = new Map<string, MemoryEntry>();
  /**
   * The last fencing token issued, for any session: tokens come from one counter, so a
   * session's entry can go once it holds neither state nor lock (an ended session keeps
   * nothing here) and its next token is still greater than every one issued before.
   */
  #fence = 0;

  async get(sessionId: string): Promise<SessionState | undefined> {
    checkSessionId(sessionId);
    return this.#entries.get(sessionId)?.state;
  }

  async set(sessionId: string, state: SessionState, options: SessionStoreSetOptions = {}): Promise<boolean> {
    checkSessionId(sessionId);
    checkState(state);
    checkWriteOptions(options);
    // A state copied from a shared store may hold its lists packed: held here as lists.
    const given = unpackState(state);
    // A JSON round trip, as a shared store does: what a later `get` returns is the same everywhere.
    // A large one (a long session's compaction) is made and frozen a part at a time, in slices.
    const copy = isLargeState(given)
      ? await runStepsYielding(deepFreezeSteps(await runStepsYielding(jsonCopySteps(given))))
      : deepFreeze(JSON.parse(JSON.stringify(given)) as SessionState);
    const entry = this.#entries.get(sessionId);
    if (options.expectedVersion !== undefined && (entry?.state?.version ?? 0) !== options.expectedVersion)
      return false;
    // A session with no entry issued its last token before the counter's value, at the latest:
    // a write under an older lock is refused (one under a lock released since may be too).
    if (options.fencingToken !== undefined && options.fencingToken < (entry?.fence ?? this.#fence))
      return false;
    if (entry) entry.state = copy;
    else this.#entries.set(sessionId, { state: copy, fence: this.#fence });
    return true;
  }

  async delete(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    const entry = this.#entries.get(sessionId);
    if (!entry) return;
    delete entry.state;
    this.#dropIfIdle(sessionId, entry);
  }

  async acquireLock(sessionId: string, ttlMs: number): Promise<SessionLock | undefined> {
    checkSessionId(sessionId);
    checkTtl(ttlMs);
    let entry = this.#entries.get(sessionId);
    if (!entry) {
      entry = { fence: this.#fence };
      this.#entries.set(sessionId, entry);
    }
    // In-process lifetimes on the monotonic clock: a wall clock stepped (NTP, a resumed VM)
    // neither stretches a lock nor lapses it early.
    const now = clock.now();
    if (entry.lock && entry.lock.until > now) return undefined;
    const token = ++this.#fence;
    entry.fence = token;
    entry.lock = { token, until: now + ttlMs };
    const held = entry;
    return {
      sessionId,
      token,
      renew: async (renewTtlMs = ttlMs) => {
        checkTtl(renewTtlMs);
        if (held.lock?.token !== token) return false;
        held.lock.until = clock.now() + renewTtlMs;
        return true;
      },
      release: async () => {
        if (held.lock?.token !== token) return false;
        delete held.lock;
        this.#dropIfIdle(sessionId, held);
        return true;
      },
    };
  }

  /**
   * Forgets a session's entry once it holds neither state nor lock (a lapsed lock not released
   * stays: its holder may still renew it); the store's counter keeps its tokens from repeating.
   */
  #dropIfIdle(sessionId: string, entry: MemoryEntry): void {
    if (entry.state === undefined && entry.lock === undefined && this.#entries.get(sessionId) === entry)
      this.#entries.delete(sessionId);
  }
}
