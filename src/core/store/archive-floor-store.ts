/**
 * The in-process session store with the archive's version floor (`StorageAdapter.
 * latestSummaryStep`): a restarted process holds no state, while its archive holds the
 * summaries the process before it sent. The first read of a session asks the archive for its
 * highest summary version and, when the store holds nothing or an older version (a state file
 * from a backup), stores a state at that version (without a summary), so the next summary is numbered above it, never v1 again beside the
 * archived v1 (docs/sessions.md, "Versions never go down"). Shared stores get the same floor
 * through the fail-open store; this one adds no time limit or copy to the in-process path.
 */
import type { SessionState, SessionStoreSetOptions } from '../session/session-state.js';
import type { SessionLock, SessionStore } from '../session/session-store.js';
import { VersionFloors, writeFloor } from './version-floors.js';

/**
 * Sessions remembered as read; past this many the one read or written longest ago is forgotten
 * and reads the floor again (one `latestSummaryStep`; the floor only lifts a state below it).
 */
const SEEN_SESSIONS = 10_000;

export class ArchiveFloorStore implements SessionStore {
  readonly name: string;
  readonly inner: SessionStore;
  readonly #floors: VersionFloors;
  readonly #onFloor: (sessionId: string, version: number) => void;
  /**
   * Sessions whose floor was read (or that were written) in this process, bounded by
   * {@link SEEN_SESSIONS}; a delete (`reset`) forgets one, so it resumes above the archive
   * as in the fail-open store, never at v1 beside the archived summaries.
   */
  readonly #seen = new Set<string>();

  constructor(
    inner: SessionStore,
    floor: (key: string) => Promise<number | undefined>,
    timeoutMs: number,
    onFloor: (sessionId: string, version: number) => void,
  ) {
    this.name = inner.name;
    this.inner = inner;
    this.#floors = new VersionFloors(floor, timeoutMs);
    this.#onFloor = onFloor;
  }

  async get(sessionId: string): Promise<SessionState | undefined> {
    const state = await this.inner.get(sessionId);
    const seen = this.#seen.has(sessionId);
    this.#see(sessionId);
    if (seen) return state;
    // A state found may be older than the archive (a state file or store restored from before).
    const version = await this.#floors.archived(sessionId);
    const writes = {
      sessionId,
      get: () => this.inner.get(sessionId),
      set: (next: SessionState, expectedVersion: number) =>
        this.inner.set(sessionId, next, { expectedVersion }),
    };
    return writeFloor(writes, version, state, () => this.#onFloor(sessionId, version ?? 0));
  }

  set(sessionId: string, state: SessionState, options?: SessionStoreSetOptions): Promise<boolean> {
    this.#see(sessionId);
    return this.inner.set(sessionId, state, options);
  }

  async delete(sessionId: string): Promise<void> {
    await this.inner.delete(sessionId);
    this.#seen.delete(sessionId);
  }

  /** Remembers `sessionId` as the session used last, forgetting the one used longest ago past the bound. */
  #see(sessionId: string): void {
    this.#seen.delete(sessionId);
    this.#seen.add(sessionId);
    if (this.#seen.size > SEEN_SESSIONS) this.#seen.delete(this.#seen.values().next().value as string);
  }

  acquireLock(sessionId: string, ttlMs: number): Promise<SessionLock | undefined> {
    return this.inner.acquireLock(sessionId, ttlMs);
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}
