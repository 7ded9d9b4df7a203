/** The options of the manager's fail-open view of its session store (fail-open-store.ts). */

/** Options of {@link FailOpenStore}. */
export interface FailOpenStoreOptions {
  /** Time limit of one store operation. */
  readonly timeoutMs: number;
  /** Called once when an outage starts, with the session key that met it and the cause. */
  readonly onOutage: (key: string, cause: string) => void;
  /**
   * Fail closed instead: no time limit, and a fault throws `storage_failed` naming the cause
   * (the manager's `failOnStorageError`).
   */
  readonly failClosed?: boolean;
  /**
   * Called when a stored state did not parse or match its schema: it was set aside (by the
   * store) or deleted, and the session goes on as new.
   */
  readonly onCorrupt?: (key: string, problem: string) => void;
  /**
   * Called when the store answered with no state (or an older version) for a session this
   * process knew at `knownVersion` (the store lost its data: restarted without persistence):
   * this process's copy was written back, so the session's version never goes down.
   */
  readonly onLost?: (key: string, knownVersion: number, storedVersion: number) => void;
  /**
   * Called once when the store answers again after an outage, with the number of calls
   * (manager calls, or operations outside one) that went on without it meanwhile.
   */
  readonly onRecovery?: (key: string, affectedCalls: number) => void;
  /**
   * The version floor of a session: the highest summary version archived for it
   * (`StorageAdapter.latestSummaryStep`). Asked once, beside the store's read, when this process
   * first reads a session it holds no copy of (a new session, or a store that lost its data or
   * holds an older state, seen by a process that never held the session): a floor above the
   * store's version is written to the store (a compare-and-set on what it held) as a state at that version without a summary, so
   * the next summary is numbered above every archived one, by every process.
   */
  readonly floor?: (key: string) => Promise<number | undefined>;
  /** Called when a session resumed its version floor from the archive (see `floor`). */
  readonly onFloor?: (key: string, version: number) => void;
}
