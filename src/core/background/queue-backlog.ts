/**
 * What a manager learns at each trigger about its queued preparations: whether the job was
 * published in time (a latency sample for the lead time) or not yet (a late one), and when the
 * workers fall behind: {@link BACKLOG_AFTER} late preparations in a row start a backlog episode
 * (one `compact.warning` `preparation_backlog`); a published one in time ends it.
 */

import type { EventBus } from '../events/event-bus.js';
import { contextOf } from '../events/store-fault-events.js';
import type { LeadTime } from './lead-time.js';

/** Late preparations in a row that make a backlog episode. */
export const BACKLOG_AFTER = 3;

/** What the manager says when a backlog episode starts (the `preparation_backlog` warning's context). */
export interface BacklogInfo {
  /** The queue's name. */
  readonly queue: string;
  /** Late preparations in a row. */
  readonly late: number;
  /** How long the last late job had waited, in milliseconds. */
  readonly waitedMs: number;
  /** The learned lead time, in milliseconds. */
  readonly leadTimeMs: number | undefined;
  /** The session whose trigger found the last late job. */
  readonly key: string;
}

/** Late preparations and backlog episodes of one manager's queue. */
export class QueueBacklog {
  readonly #lead: LeadTime;
  readonly #queue: string;
  readonly #onBacklog: ((info: BacklogInfo) => void) | undefined;
  #streak = 0;
  #late = 0;
  #episodes = 0;
  #inEpisode = false;

  constructor(lead: LeadTime, queue: string, onBacklog?: (info: BacklogInfo) => void) {
    this.#lead = lead;
    this.#queue = queue;
    this.#onBacklog = onBacklog;
  }

  /**
   * What a trigger hears of its job's summary across its reads (the first, and those while it
   * waits for the worker running the job): a summary published meanwhile is in time (its
   * latency recorded once); `end` records the job as late when none was.
   */
  observer(
    key: string,
    queuedAt: number,
  ): { seen: (publishedAt: number | undefined, queueMs?: number) => void; end: () => void } {
    let late = false;
    let heard = false;
    return {
      seen: (publishedAt, queueMs) => {
        if (heard) return;
        if (publishedAt === undefined) late = true;
        else {
          heard = true;
          // The worker's measure of the job's time in the queue, on one clock: its `createdAt`
          // is on the worker's own clock, seconds apart from this process's on some machines.
          this.observe(key, queuedAt, queueMs === undefined ? publishedAt : queuedAt + queueMs);
        }
      },
      end: () => {
        if (late && !heard) this.observe(key, queuedAt, undefined);
      },
    };
  }

  /**
   * At a trigger of `key`: its job, enqueued at `queuedAt` (epoch ms), was published at
   * `publishedAt` (epoch ms), or not yet (`undefined`).
   */
  observe(key: string, queuedAt: number, publishedAt: number | undefined, now = Date.now()): void {
    const waited = Math.max(0, now - queuedAt);
    if (publishedAt !== undefined) {
      this.#lead.recordLatency(Math.min(waited, Math.max(0, publishedAt - queuedAt)));
      this.#streak = 0;
      this.#inEpisode = false;
      return;
    }
    this.#lead.recordLatency(waited, true);
    this.#late++;
    this.#streak++;
    if (this.#streak < BACKLOG_AFTER || this.#inEpisode) return;
    this.#inEpisode = true;
    this.#episodes++;
    try {
      this.#onBacklog?.({
        queue: this.#queue,
        late: this.#streak,
        waitedMs: waited,
        leadTimeMs: this.#lead.leadMs(),
        key,
      });
    } catch {
      // A failing listener costs the listener only.
    }
  }

  /** Late preparations so far, backlog episodes, and whether one is going on. */
  status(): { late: number; backlogEpisodes: number; backlog: boolean } {
    return { late: this.#late, backlogEpisodes: this.#episodes, backlog: this.#inEpisode };
  }
}

/**
 * The background preparations' `onBacklog`: one `compact.warning` (`preparation_backlog`) per
 * backlog episode of the queue (its workers fall behind: jobs not published by their
 * session's trigger several times in a row; the agents compact at the trigger meanwhile).
 */
export function backlogEvent(bus: EventBus): (info: BacklogInfo) => void {
  return (info) =>
    bus.emit(
      contextOf(info.key),
      'compact.warning',
      {
        code: 'preparation_backlog',
        message: `the preparation queue "${info.queue}" falls behind: ${info.late} jobs in a row were not published by their session's trigger (the last waited ${info.waitedMs} ms); the agents compact at the trigger meanwhile. Add workers or concurrency. Said once per episode.`,
        context: {
          queue: info.queue,
          late: info.late,
          waitedMs: info.waitedMs,
          ...(info.leadTimeMs === undefined ? {} : { leadTimeMs: info.leadTimeMs }),
        },
      },
      { start: Date.now() },
    );
}
