/** The counters and options of a manager's background preparations (background-preparation.ts). */

import type { SessionStore } from '../session/session-store.js';
import type { PreparationThreshold } from './lead-time.js';
import type { BacklogInfo } from './queue-backlog.js';
import type { PreparedSigning } from './shared-preparation.js';

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
  /**
   * Preparations that ran a summarizer in this process (with a shared store, only the one
   * holding the session's preparation lock, and only for a version nobody published yet).
   */
  summarized: number;
  /** Jobs handed to the preparation queue (`preparationQueue`); a worker summarizes them. */
  queued: number;
  /**
   * Preparations not started because the session would reach its trigger before one could be
   * ready (by the learned latency): their job could only be dropped unused.
   */
  tooLate: number;
  /** Queued preparations found not yet published at their session's trigger. */
  late: number;
  /** Backlog episodes (each said once with a `compact.warning` `preparation_backlog`). */
  backlogEpisodes: number;
  /** True while the queue's workers fall behind (since the episode's warning, until a summary is in time). */
  backlog: boolean;
  /**
   * The p90 of recent preparation latencies (start or enqueue to published), in milliseconds:
   * the queue's lag as this manager sees it. `undefined` until one was seen.
   */
  queueLatencyMs: number | undefined;
  /** The lead time preparations start for (the latency with a margin), in milliseconds. */
  leadTimeMs: number | undefined;
  /** The threshold that started the latest preparation, and its basis. */
  lastThreshold: PreparationThreshold | undefined;
}

/** How a manager's preparations choose their start, and whom they tell of a backlog. */
export interface BackgroundOptions {
  /**
   * `learned`: a preparation starts a lead time ahead of the trigger, at the session's growth
   * (`policy.prepareAtPct` until both are known); `fixed`: at `policy.prepareAtPct`.
   */
  readonly lead?: 'learned' | 'fixed';
  /** Called once per backlog episode of the queue. */
  readonly onBacklog?: (info: BacklogInfo) => void;
}

/**
 * A store shared with other processes, how long a preparation's lock is held at most, and
 * what signs and checks the prepared records there.
 */
export interface SharedStore {
  readonly store: SessionStore;
  readonly lockTtlMs: number;
  readonly signing: PreparedSigning;
}
