/** Waiting at the trigger for a summary another process is preparing (shared store, no queue). */

import type { SessionView } from '../preflight/session-view.js';
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
  const deadline = Date.now() + Math.max(1_000, (lockTtlMs - 5_000) / 2);
  while (Date.now() < deadline && !signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const found = await readPrepared(store, key, view, signing);
    if (found) return found;
    if (await lockFree()) return readPrepared(store, key, view, signing);
  }
  return undefined;
}
