/** Waiting at the trigger for a summary another process or a queue worker is preparing. */

import { clock } from '../clock.js';
import type { SessionView } from '../preflight/view/session-view.js';
import type { SessionLock } from '../session/session-store.js';
import type { SharedStore } from './background-status.js';
import { preparedKey, readPrepared, type SharedPrepared } from './shared-preparation.js';

/**
 * When another process holds `key`'s preparation lock, polls the store for its summary until
 * it is published, the lock is free, `signal` fires or the summarizer's time limit passes
 * (the lock lives twice that, plus 5 s). A probe that gets the lock means nobody prepares.
 */
export async function awaitOtherPreparation(
  shared: SharedStore,
  key: string,
  view: SessionView,
  signal?: AbortSignal,
): Promise<SharedPrepared | undefined> {
  const { store, lockTtlMs, signing } = shared;
  const lockFree = async () => {
    const probe = await store.acquireLock(preparedKey(key), 1_000).catch(() => undefined);
    if (probe) await probe.release().catch(() => false);
    return probe !== undefined;
  };
  if (await lockFree()) return undefined;
  const deadline = clock.now() + Math.max(1_000, (lockTtlMs - 5_000) / 2);
  while (clock.now() < deadline && !signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const found = await readPrepared(store, key, view, signing);
    if (found) return found;
    if (await lockFree()) return readPrepared(store, key, view, signing);
  }
  return undefined;
}

/** What the trigger of a queued session ends with: a worker's summary, or the version claimed. */
export interface ClaimedOrPrepared {
  /** The summary a worker published while the trigger waited. */
  readonly found?: SharedPrepared;
  /**
   * The session's preparation claim, held by the trigger that compacts without a prepared
   * summary: a worker that picks this version's job meanwhile drops it unsummarized. Released
   * once the compaction is over.
   */
  readonly claim?: SessionLock;
}

/**
 * At the trigger of a session whose preparations go to a queue, when no summary is published
 * for the view's version: claims the session's preparation (the lock a worker holds while it
 * summarizes and publishes), so no worker starts this version's job while the agent compacts
 * it itself. When a worker holds it (it is summarizing this version now), its summary is
 * awaited rather than written a second time: until it is published, the worker's claim ends
 * (it lapses within a second and a half of the worker's death), `signal` fires, or `maxWaitMs`
 * (at most the summarizer's time limit) passes: then the agent compacts without the claim
 * (the worker's publish is fenced). `seen` hears each read (see `readPrepared`).
 */
export async function claimOrAwait(
  shared: SharedStore,
  key: string,
  view: SessionView,
  signal?: AbortSignal,
  wait: {
    maxWaitMs?: number;
    seen?: (publishedAt: number | undefined, queueMs?: number) => void;
    /** The claim's lock: the session's preparation lock unless told (a job's fold's, branch-prepared.ts). */
    lock?: string;
  } = {},
): Promise<ClaimedOrPrepared> {
  const { maxWaitMs = Number.POSITIVE_INFINITY, seen, lock = preparedKey(key) } = wait;
  const { store, lockTtlMs, signing } = shared;
  const claim = () => store.acquireLock(lock, lockTtlMs).catch(() => undefined);
  let held = await claim();
  if (held) return { claim: held };
  const deadline = clock.now() + Math.min(maxWaitMs, Math.max(1_000, (lockTtlMs - 5_000) / 2));
  while (clock.now() < deadline && !signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const found = await readPrepared(store, key, view, signing, seen);
    if (found) return { found };
    held = await claim();
    // The worker is done (fenced, failed or dead) without a summary that fits: the agent compacts.
    if (held) {
      const late = await readPrepared(store, key, view, signing, seen);
      if (late) await held.release().catch(() => false);
      return late ? { found: late } : { claim: held };
    }
  }
  return {};
}
