/**
 * The contract between background preparation and a job queue (manager option
 * `preparationQueue`; the BullMQ implementation is `agent-compaction/queue`). The manager
 * hands over one job per session and summary version, its messages already redacted; a
 * worker anywhere summarizes it (background/run-preparation-job.ts) and publishes the summary
 * in the session store, where the agent that reaches the trigger finds it
 * (background/shared-preparation.ts).
 * The agent never waits for a job still in the queue; one a worker runs at the trigger (the
 * worker holds the session's preparation claim) is awaited, bounded.
 */

import { createHash } from 'node:crypto';
import type { CompactMessage } from '../messages/message.js';

/** One summary to prepare: everything a worker needs, nothing of the agent's process. */
export interface PreparationJob {
  /** The session's state key in the store (the session id, or an agent's own key). */
  readonly key: string;
  readonly sessionId: string;
  /** The summary version the preparation extends (the session's state version when enqueued). */
  readonly baseVersion: number;
  /**
   * The anchor chain of the stored state the preparation extends (`''`: none, or a state without
   * an anchor): with {@link fold}, it names the branch of the session the job serves (a fork
   * resumes its own state, and versions grow across branches). A worker fences such a job by
   * that branch and publishes its summary beside the other branches' (shared-preparation.ts).
   * Absent in a job of an agent before branches were named: fenced by the session's newest
   * version and published in the session's one slot, as then.
   */
  readonly baseChain?: string;
  /** {@link preparationFold} of the job: with `baseChain`, absent in an older agent's job. */
  readonly fold?: string;
  /** Ids of the folded messages, in history order. */
  readonly foldedIds: readonly string[];
  /** Their content hashes (an edit that keeps an id changes the hash). */
  readonly foldedHashes: readonly string[];
  /** The folded messages, redacted as the summarizer's input is. */
  readonly messages: readonly CompactMessage[];
  /** The previous summary's body, redacted. */
  readonly previousSummary?: string;
  readonly strategy: string;
  readonly maxTokens: number;
  readonly agent?: string;
  /** The request shows an AI assistant on the other side (see `SummarizeRequest.withAssistant`). */
  readonly withAssistant?: boolean;
  /** Epoch milliseconds. */
  readonly enqueuedAt: number;
  /**
   * When the agent expects the session's trigger (epoch milliseconds): a summary published
   * later is of no use (the agent compacts at the trigger without it). A worker that cannot
   * finish before then drops the job unsummarized (`expired`). Absent: no deadline known.
   */
  readonly deadline?: number;
  /**
   * When the agent expects the session's trigger at its current pace, without the deadline's
   * margin (epoch milliseconds): a fleet-wide schedule starts the job as late as the jobs due
   * before it and the workers' slots allow (agent-compaction/queue). Absent: run when picked.
   */
  readonly dueAt?: number;
}

/**
 * A queue of summary preparations. `enqueue` adds the job once across every process
 * (a second add of the same session and version is a no-op) and resolves once the queue
 * holds it; it may reject (the queue is down): the agent then compacts at the trigger as
 * without a queue.
 */
export interface PreparationQueue {
  /** The queue's name (in events and status). */
  readonly name: string;
  enqueue(job: PreparationJob): Promise<void>;
  /**
   * Takes a job of `key` and `baseVersion` out of the queue while it waits (the agent compacted
   * without it, or dropped it): no worker picks it up. A running job is left alone (its
   * publish is fenced). With `fold`, only that fold's job (not a sibling fork's at the same
   * base). Optional; never awaited on the agent's path.
   */
  withdraw?(key: string, baseVersion: number, fold?: string): Promise<void>;
  /**
   * The session's newer estimate of its trigger for the job of `key` and `baseVersion`
   * (`dueAt`, epoch ms), told at each call past its threshold while the job is pending: a
   * schedule across the fleet starts it by it. Optional; never awaited on the agent's path.
   */
  reschedule?(key: string, baseVersion: number, dueAt: number, fold?: string): Promise<void>;
  /**
   * Removes every job of `key` for versions 0 to `throughVersion` that is not running, finished
   * ones included (`reset`): a queue that keeps a finished job's id taken (a later add of it a
   * no-op) would otherwise give the conversation that reuses the session id no job for any
   * version the old one reached. Optional; awaited by `reset`, a failure ignored.
   */
  forget?(key: string, throughVersion: number): Promise<void>;
}

/**
 * The job's id: one per session key and summary version, the same in every process. Made of
 * characters job queues accept in ids (no `:`, never a bare integer). A job whose id another
 * fold's job holds (another fork at the same base, or the conversation before a reset) is
 * added as {@link siblingJobId}.
 */
export function preparationJobId(key: string, baseVersion: number): string {
  return `prep-${encodeURIComponent(key)}-v${baseVersion}`;
}

/**
 * A short tag naming what a preparation folds and the state it extends: two forks at one base
 * that fold different messages get different tags (and jobs); the same fold anywhere in the
 * fleet gets the same one. Hex of SHA-256, linear in the folded ids.
 */
export function preparationFold(
  baseVersion: number,
  baseChain: string,
  foldedIds: readonly string[],
  foldedHashes: readonly string[],
): string {
  const hash = createHash('sha256').update(`${baseVersion}\u0000${baseChain}\u0000`);
  for (let i = 0; i < foldedIds.length; i++)
    hash.update(`${foldedIds[i]}\u0000${foldedHashes[i] ?? ''}\u0000`);
  return hash.digest('hex').slice(0, 16);
}

/**
 * The id of a job whose {@link preparationJobId} another fork's job holds (a sibling at one
 * base): the base's id and the fold's tag.
 */
export function siblingJobId(key: string, baseVersion: number, fold: string): string {
  return `${preparationJobId(key, baseVersion)}-f${fold}`;
}

/** The prefix of a summary's `summarizer` when a queue worker prepared it (`queue:<name>`). */
export const QUEUE_SUMMARIZER_PREFIX = 'queue:';
