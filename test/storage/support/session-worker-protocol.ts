/** The messages between redis-multi-process.test.ts and its session workers. */

/** A trigger from the parent: compact up to version `trigger`. */
export interface TriggerMessage {
  type: 'trigger';
  trigger: number;
  compactMs: number;
  ttlMs: number;
}

/** What a worker reports. */
export type WorkerReport =
  | { type: 'ready'; worker: string }
  /**
   * `at`: when the update began under the lock (after the lock and a read: later than the
   * lock was granted, by as long as a loaded machine delays those). `since`: when the worker
   * asked for it (earlier than it was granted).
   */
  | { type: 'locked'; worker: string; trigger: number; token: number; at: number; since: number }
  | { type: 'done'; worker: string; trigger: number; outcome: 'wrote' | 'already' | 'refused' | 'timeout' };

/** The one session every worker serves. */
export const SESSION = 'shared-session';
