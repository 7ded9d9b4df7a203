/**
 * Prepared summaries shared by the processes serving a session through one store: a
 * background preparation (under the session's preparation lock) or a queue worker publishes
 * the summary in the store, where whichever process compacts at the trigger finds it.
 *
 * The record is a {@link SessionState} under `<key>::prepared` (the store holds nothing
 * else): `version` is the summary version it makes (the base it extends + 1), `summary` the
 * prepared body, `coveredIds` the folded message ids and `keptIds` their content hashes, in
 * order, and `mac` the MAC of all of them under the installation's summary key
 * (`SummaryMarks.recordMac`). Publishing is a compare-and-set: the first record of a version
 * wins, a later one for the same version (a retried job, another worker, a background
 * preparation) is refused, so every process adopts the same text. A record whose MAC does
 * not verify (a worker without the key, a record rewritten in the store) is never adopted.
 * A preparation that names its branch (`baseChain`, a queue job of a fork-aware agent) is
 * published among the session's branch records instead (branch-prepared.ts); a reader looks
 * at both.
 */

import type { SummarizeOutcome } from '../preflight/cascade/summarize-remainder.js';
import type { SessionView } from '../preflight/view/session-view.js';
import type { SessionState, SessionStore } from '../session/session-store.js';
import type { SummaryMarks } from '../summary/summary-mark.js';
import { branchCandidates, branchesKey, publishBranch } from './branch-prepared.js';

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
  /** The anchor chain of the state it extends, when it names its branch (branch-prepared.ts). */
  readonly baseChain?: string;
  readonly foldedIds: readonly string[];
  readonly foldedHashes: readonly string[];
  readonly outcome: SummarizeOutcome;
}

/** What signs and checks prepared records, and hears of the ones refused. */
export interface PreparedSigning {
  readonly marks: SummaryMarks;
  /** Called for a record found whose MAC does not verify (it is not adopted). */
  readonly onRefused?: (key: string, why: string) => void;
}

/** The fields a record's MAC covers, in order. */
function macParts(key: string, prepared: SharedPrepared): string[] {
  return [
    'prepared',
    key,
    String(prepared.baseVersion + 1),
    String(prepared.baseVersion),
    JSON.stringify(prepared.foldedIds),
    JSON.stringify(prepared.foldedHashes),
    prepared.outcome.summarizer,
    prepared.outcome.text,
    // A branch's record: its base is signed too (a record of the session's one slot has none).
    ...(prepared.baseChain === undefined ? [] : ['base', prepared.baseChain]),
  ];
}

/** The prepared summary a record holds when it is well formed and its MAC verifies, else why not. */
function verified(key: string, record: SessionState, signing: PreparedSigning): SharedPrepared | string {
  const hashes = record.keptIds ?? [];
  if (!record.summary || record.version < 1 || hashes.length !== record.coveredIds.length) return 'malformed';
  const prepared: SharedPrepared = {
    baseVersion: record.version - 1,
    foldedIds: record.coveredIds,
    foldedHashes: hashes,
    outcome: { text: record.summary.text, summarizer: record.summary.summarizer },
    ...(record.anchor ? { baseChain: record.anchor.chain } : {}),
  };
  if (typeof record.mac !== 'string') return 'unsigned';
  return signing.marks.verifyRecordMac(key, macParts(key, prepared), record.mac) ? prepared : 'bad MAC';
}

/**
 * The summary version the published prepared summary of `key` extends (`undefined`: none, or
 * the store failed: the caller then prepares, as without sharing). Records are not verified
 * here: this only spares a second summarization.
 */
export async function publishedVersion(store: SessionStore, key: string): Promise<number | undefined> {
  const record = await store.get(preparedKey(key)).catch(() => undefined);
  return record?.summary && record.version >= 1 ? record.version - 1 : undefined;
}

/**
 * Publishes a prepared summary, signed, when no record of its version (or a newer one) is
 * there: `'published'`, `'taken'` (another publisher's record of this version or a newer
 * one stands) or `'failed'` (the store failed: the caller only loses the sharing).
 */
export async function publishPrepared(
  store: SessionStore,
  key: string,
  prepared: SharedPrepared,
  signing: PreparedSigning,
  heldMs?: number,
  queueMs?: number,
): Promise<'published' | 'taken' | 'failed'> {
  const record: SessionState = {
    sessionId: preparedKey(key),
    version: prepared.baseVersion + 1,
    summary: {
      text: prepared.outcome.text,
      tokens: 0,
      summarizer: prepared.outcome.summarizer,
      createdAt: Date.now(),
    },
    coveredIds: [...prepared.foldedIds],
    keptIds: [...prepared.foldedHashes],
    mac: signing.marks.recordMac(key, macParts(key, prepared)),
    ...(heldMs ? { heldMs } : {}),
    ...(queueMs !== undefined ? { queueMs } : {}),
    updatedAt: Date.now(),
  };
  const { baseChain } = prepared;
  if (baseChain !== undefined)
    return publishBranch(
      store,
      key,
      { ...record, anchor: { length: 0, chain: baseChain } },
      { ...prepared, baseChain },
    );
  try {
    // A compare-and-set on the record found: two publishers of one version, one winner.
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = (await store.get(preparedKey(key)))?.version ?? 0;
      if (current >= record.version) return 'taken';
      if (await store.set(preparedKey(key), record, { expectedVersion: current })) return 'published';
    }
    return 'taken';
  } catch {
    return 'failed';
  }
}

/**
 * The published prepared summary of `key` when its MAC verifies and it still fits `view`, else
 * `undefined`: the session's one slot's record, or a branch record of the view's base
 * (branch-prepared.ts). `seen` hears when a record found was published for the view's version
 * and base (its `createdAt`, and its `queueMs` when told; the one that fits first), fitting or
 * not, or `undefined` when none was.
 */
export async function readPrepared(
  store: SessionStore,
  key: string,
  view: SessionView,
  signing: PreparedSigning,
  seen?: (publishedAt: number | undefined, queueMs?: number) => void,
): Promise<SharedPrepared | undefined> {
  const [found, branches] = await Promise.all([
    store.get(preparedKey(key)).catch(() => null),
    store.get(branchesKey(key)).catch(() => null),
  ]);
  const candidates = branchCandidates(branches ?? undefined, view);
  // The one slot's record names no branch: only for a view of the newest state.
  if (found?.summary && found.version === view.version + 1 && !view.mismatch) candidates.push(found);
  let fit: { record: SessionState; prepared: SharedPrepared } | undefined;
  for (const record of candidates) {
    const prepared = verified(key, record, signing);
    if (typeof prepared === 'string') signing.onRefused?.(key, prepared);
    else if (coversPrefix(prepared.foldedIds, prepared.foldedHashes, view)) {
      fit = { record, prepared };
      break;
    }
  }
  // A failing store tells nothing about the queue. A job a queue's schedule held was published
  // that much later than the queue needed.
  const told = fit?.record ?? candidates[0];
  if (found !== null || branches !== null)
    seen?.(told?.summary ? told.summary.createdAt - (told.heldMs ?? 0) : undefined, told?.queueMs);
  return fit?.prepared;
}
