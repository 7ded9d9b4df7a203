/**
 * Background preparations shared by the processes serving a session through one store:
 * only the process that takes the session's preparation lock summarizes; it publishes the
 * prepared summary in the store, where whichever process compacts at the trigger finds it.
 *
 * The record is a {@link SessionState} under `<key>::prepared` (the store holds nothing
 * else): `version` is the summary version it extends, `summary` the prepared body,
 * `coveredIds` the folded message ids and `keptIds` their content hashes, in order.
 */

import type { SummarizeOutcome } from '../preflight/cascade/summarize-remainder.js';
import type { SessionView } from '../preflight/session-view.js';
import type { SessionState, SessionStore } from '../session/session-store.js';

/** The store key of a session's prepared summary (and of its preparation lock). */
export function preparedKey(key: string): string {
  return `${key}::prepared`;
}

/** True when `foldedIds` (with their content hashes) are a prefix of the view's unpinned messages, none pinned since. */
export function coversPrefix(
  foldedIds: readonly string[],
  foldedHashes: readonly string[],
  view: SessionView,
): boolean {
  const folded = new Set(foldedIds);
  let next = 0;
  for (const entry of view.entries) {
    if (next === foldedIds.length) break;
    if (entry.pinned) {
      if (folded.has(entry.item.id)) return false;
      continue;
    }
    if (entry.item.id !== foldedIds[next] || entry.item.entry.hash !== foldedHashes[next]) return false;
    next++;
  }
  return next === foldedIds.length;
}

/** A prepared summary as published (see the module's comment). */
export interface SharedPrepared {
  readonly baseVersion: number;
  readonly foldedIds: readonly string[];
  readonly foldedHashes: readonly string[];
  readonly outcome: SummarizeOutcome;
}

/**
 * The summary version the published prepared summary of `key` extends (`undefined`: none, or
 * the store failed: the caller then prepares, as without sharing).
 */
export async function publishedVersion(store: SessionStore, key: string): Promise<number | undefined> {
  const record = await store.get(preparedKey(key)).catch(() => undefined);
  return record?.summary ? record.version : undefined;
}

/**
 * Publishes a prepared summary for the other processes; false when the store failed (the
 * caller only loses the sharing).
 */
export async function publishPrepared(
  store: SessionStore,
  key: string,
  prepared: SharedPrepared,
): Promise<boolean> {
  const record: SessionState = {
    sessionId: preparedKey(key),
    version: prepared.baseVersion,
    summary: {
      text: prepared.outcome.text,
      tokens: 0,
      summarizer: prepared.outcome.summarizer,
      createdAt: Date.now(),
    },
    coveredIds: [...prepared.foldedIds],
    keptIds: [...prepared.foldedHashes],
    updatedAt: Date.now(),
  };
  return store.set(preparedKey(key), record).catch(() => false);
}

/** The published prepared summary of `key` when it still fits `view`, else `undefined`. */
export async function readPrepared(
  store: SessionStore,
  key: string,
  view: SessionView,
): Promise<SharedPrepared | undefined> {
  const record = await store.get(preparedKey(key)).catch(() => undefined);
  if (!record?.summary || record.version !== view.version || view.mismatch) return undefined;
  const hashes = record.keptIds ?? [];
  if (hashes.length !== record.coveredIds.length || !coversPrefix(record.coveredIds, hashes, view))
    return undefined;
  return {
    baseVersion: record.version,
    foldedIds: record.coveredIds,
    foldedHashes: hashes,
    outcome: { text: record.summary.text, summarizer: record.summary.summarizer },
  };
}
