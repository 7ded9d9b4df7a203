/**
 * A session's version floor from the archive (issue 46): the highest summary version archived
 * for it (`StorageAdapter.latestSummaryStep`). The fail-open store reads it when it first
 * reads a session this process holds no copy of (its store may hold nothing, or an older
 * state), and during an outage when the
 * archive knows a higher version than this process's copy (another process compacted the
 * session since this one last saw it): so no answer goes below a version already sent.
 *
 * During an outage the floor is read again on every call: an outage is this process's view
 * (it stops asking the store for a while after a fault), and another process may reach the
 * store meanwhile and send a new version, archived before it is sent.
 */

import type { SessionState } from '../session/session-state.js';
import { idleTimeLimit } from './idle-time-limit.js';

/** Reads and keeps the archive's version floors of sessions. */
export class VersionFloors {
  readonly #read: ((key: string) => Promise<number | undefined>) | undefined;
  readonly #timeoutMs: number;
  /** Per session, the highest floor read during the current outage (a failed read keeps it). */
  readonly #outage = new Map<string, number>();
  /** The floors this process answered with during an outage, per session. */
  readonly #served = new Map<string, number>();

  constructor(read: ((key: string) => Promise<number | undefined>) | undefined, timeoutMs: number) {
    this.#read = read;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * The archive's floor of `key` (`undefined`: none, no archive, or not a session key: only
   * keys without `::` have one), read within the store's time limit; a failing or late archive
   * costs the floor only.
   */
  async archived(key: string): Promise<number | undefined> {
    if (!this.#read || key.includes('::')) return undefined;
    const limit = idleTimeLimit(this.#timeoutMs);
    const read = this.#read(key).catch(() => undefined);
    const version = await Promise.race([read, limit.promise]).catch(() => undefined);
    limit.cancel();
    return typeof version === 'number' && Number.isInteger(version) && version > 0 ? version : undefined;
  }

  /**
   * During an outage: `local` (this process's copy), unless the archive knows a higher version
   * of the session: then a state at that version without a summary. Read on every call (see
   * the file comment); a read that fails or is late keeps the highest floor read before.
   */
  async duringOutage(key: string, local: SessionState | undefined): Promise<SessionState | undefined> {
    const version = Math.max(this.#outage.get(key) ?? 0, (await this.archived(key)) ?? 0);
    if (version > 0) this.#outage.set(key, version);
    if (version <= (local?.version ?? 0)) return local;
    this.serve(key, version);
    return { sessionId: key, version, coveredIds: [], updatedAt: 0 };
  }

  /**
   * `version` of `key` went out of this process (an answer during an outage) or into the
   * archive (a summary whose state the store refused) above the store's: the store is lifted
   * to it when it answers ({@link takeServed}), so no other text ever takes that version.
   */
  serve(key: string, version: number): void {
    this.#served.set(key, Math.max(version, this.#served.get(key) ?? 0));
  }

  /** The floor this process answered `key` with during the outage, forgotten once taken. */
  takeServed(key: string): number | undefined {
    const served = this.#served.get(key);
    this.#served.delete(key);
    return served;
  }

  /** The store answers again: floors are read anew at the next outage. */
  outageEnded(): void {
    this.#outage.clear();
  }
}

/** The store's `get` and compare-and-set of one session, as the fail-open store runs them. */
export interface StoreWrites {
  readonly sessionId: string;
  get(): Promise<SessionState | undefined>;
  set(state: SessionState, expectedVersion: number): Promise<boolean>;
}

/**
 * The store holds `found`, below `version` (nothing, and the archive's floor of a session this
 * process holds no copy of; or below a floor this process answered with during an outage): a
 * state at `version` without a summary is written (a compare-and-set on what was found: when
 * another process wrote first, its state is read back), so the next summary is numbered above
 * it by every process. `onWritten` hears of a floor written.
 */
export async function writeFloor(
  store: StoreWrites,
  version: number | undefined,
  found: SessionState | undefined,
  onWritten: () => void,
): Promise<SessionState | undefined> {
  if (version === undefined || (found?.version ?? 0) >= version) return found;
  const state: SessionState = { sessionId: store.sessionId, version, coveredIds: [], updatedAt: Date.now() };
  if (!(await store.set(state, found?.version ?? 0))) return store.get();
  onWritten();
  return state;
}

/**
 * The store lost its data (it holds `found`, older than this process's `copy`): the copy is
 * written back, a compare-and-set (the highest copy among the processes wins), and the
 * store's state after that is returned.
 */
export async function writeBack(
  store: StoreWrites,
  copy: SessionState | undefined,
  found: SessionState | undefined,
): Promise<SessionState | undefined> {
  let current = found;
  for (let attempt = 0; copy && attempt < 3; attempt++) {
    if ((current?.version ?? 0) >= copy.version) break;
    if (await store.set(copy, current?.version ?? 0)) return JSON.parse(JSON.stringify(copy)) as SessionState;
    current = await store.get();
  }
  return current;
}
