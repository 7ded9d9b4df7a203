/**
 * Token counts kept with a session's state, so that a fresh process (a serverless request, a
 * restarted worker) on a known session does not tokenize its history again: one record per
 * session under `<key>::counts` in the store the manager already has, read on the first call
 * of a long history and written after calls, in the background, when the history has grown.
 *
 * The record is a {@link SessionState} (every store holds those and nothing else) whose
 * `tokenCounts` field holds the counts by content hash, for one scope (the counter's name, the
 * model and the message format: a count is only reused where it would be computed the same).
 * Counts only spare work: a record missing, stale, from another scope or unreadable costs a
 * recount, never a different answer. Read and written directly on the user's store (not the
 * manager's in-process copy of states), each operation bounded in time; a failure is ignored.
 */

import type { SessionState, SessionStore } from '../session/session-store.js';
import { FailOpenStore } from './fail-open-store.js';

/** The store key of a session's token counts. */
export function countsKey(key: string): string {
  return `${key}::counts`;
}

/** What the record holds: two space-separated lists of the same length. */
export interface StoredTokenCounts {
  /** `counter name|model|format`: counts are reused only within the same scope. */
  scope: string;
  /** Content hashes of the counted messages (`IndexedEntry.hash`). */
  hashes: string;
  /** Their token counts, in the same order. */
  tokens: string;
}

/** The state-shaped record of a session's counts. */
interface CountsRecord extends SessionState {
  tokenCounts?: StoredTokenCounts;
}

/** Longest wait for the record's read or write; past it the call goes on without. */
export const COUNTS_TIMEOUT_MS = 2_000;

/** The user's store behind the manager's fail-open wrapper (nothing of the record is kept in process). */
function innerOf(store: SessionStore): SessionStore | undefined {
  if (store instanceof FailOpenStore) return store.down ? undefined : store.inner;
  return store;
}

/** `operation`, or `undefined` when it fails or takes longer than {@link COUNTS_TIMEOUT_MS}. */
async function bounded<T>(operation: () => Promise<T>): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), COUNTS_TIMEOUT_MS);
    timer.unref?.();
  });
  try {
    return await Promise.race([operation().catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The counts stored for session `key` in `scope`, as stored: two space-separated lists, read
 * by the caller a piece at a time (see {@link decodeStoredCounts}) rather than split at once
 * (`undefined`: none, another scope, a malformed record, or the store failed).
 */
export async function readStoredCounts(
  store: SessionStore,
  key: string,
  scope: string,
): Promise<StoredTokenCounts | undefined> {
  const inner = innerOf(store);
  if (!inner) return undefined;
  const record = (await bounded(() => inner.get(countsKey(key)))) as CountsRecord | undefined;
  const counts = record?.tokenCounts;
  if (!counts || counts.scope !== scope) return undefined;
  if (typeof counts.hashes !== 'string' || typeof counts.tokens !== 'string') return undefined;
  return counts;
}

/**
 * Decodes a record's lists into `into` (hash to count), `batch` pairs per step of `steps`
 * (a step yields between batches): no list is split at once, and a count made of digits is
 * read without a string of its own. A pair whose count is not a run of digits of a safe integer
 * is left out; lists of different lengths decode to `false` (the record is not used).
 */
export function* decodeStoredCounts(
  counts: StoredTokenCounts,
  into: Map<string, number>,
  batch = 1024,
): Generator<void, boolean, void> {
  const { hashes, tokens } = counts;
  let hashAt = 0;
  let tokenAt = 0;
  for (let n = 1; ; n++) {
    const hashEnd = endOf(hashes, hashAt);
    const tokenEnd = endOf(tokens, tokenAt);
    const count = countAt(tokens, tokenAt, tokenEnd);
    if (Number.isSafeInteger(count) && count >= 0) into.set(hashes.slice(hashAt, hashEnd), count);
    const lastHash = hashEnd === hashes.length;
    if (lastHash !== (tokenEnd === tokens.length)) return false;
    if (lastHash) return true;
    hashAt = hashEnd + 1;
    tokenAt = tokenEnd + 1;
    if (n % batch === 0) yield;
  }
}

/** The end of the list item starting at `from` (the next space, or the end of the list). */
function endOf(list: string, from: number): number {
  const end = list.indexOf(' ', from);
  return end === -1 ? list.length : end;
}

/**
 * The count written as the digits from `from` to `end` (without a slice for up to 15 of them);
 * `NaN` for anything the writer does not write: an empty entry (which `Number` reads as 0, so a
 * record with blank entries gave every message 0 tokens), a sign, an exponent, a hex prefix.
 */
function countAt(list: string, from: number, end: number): number {
  if (end === from) return Number.NaN;
  let value = 0;
  for (let i = from; i < end; i++) {
    const digit = list.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return end - from > 15 ? Number(list.slice(from, end)) : value;
}

/** Stores the counts of session `key` (replacing the record); false when the store failed. */
export async function writeStoredCounts(
  store: SessionStore,
  key: string,
  counts: StoredTokenCounts,
): Promise<boolean> {
  const inner = innerOf(store);
  if (!inner) return false;
  const record: CountsRecord = {
    sessionId: countsKey(key),
    version: 0,
    coveredIds: [],
    tokenCounts: counts,
    updatedAt: Date.now(),
  };
  return (await bounded(() => inner.set(countsKey(key), record))) === true;
}

/** Deletes the counts of session `key` (a reset), and its quick record; a failure is ignored. */
export async function deleteStoredCounts(store: SessionStore, key: string): Promise<void> {
  const inner = innerOf(store);
  if (inner) await bounded(() => Promise.all([inner.delete(countsKey(key)), inner.delete(quickKey(key))]));
}

/** The store key of a session's quick record. */
export function quickKey(key: string): string {
  return `${key}::quick`;
}

/**
 * What a fresh process needs to answer a known session's first call without indexing its
 * history (preflight/quick/quick-resume.ts), written after the calls of a warm one whose answer was
 * the history as given: the history's length and print (preflight/quick/quick-print.ts), its token
 * sums and pinned messages, and what they were computed under.
 */
export interface QuickRecord {
  /** `counter name|model|format`, as {@link StoredTokenCounts.scope}. */
  scope: string;
  /** The pin rule (`rolesNeverPrune` and `protectedFlag`). */
  rule: string;
  /** The state's `pinnedIds`, joined. */
  pins: string;
  length: number;
  /** Prints of a sample of its messages (preflight/quick/quick-print.ts). */
  print: string;
  /** Positions of its messages a warm call sent without their `meta`. */
  metaAt: number[];
  /** Token sums of the history's messages by role group (as a view's `sums`). */
  sums: { system: number; developer: number; messages: number };
  /** Pinned messages among them. */
  pinned: number;
  /**
   * Set when the session compacted: the request its history went out as (the view's messages
   * and the summary), for the stored state it was made under (preflight/quick/quick-compacted.ts).
   * `sums` are then the view's (the covered messages are not sent), `pinned` the request's.
   */
  compacted?: CompactedLayout;
}

/** What a warm call sent of a compacted session's history (see {@link QuickRecord.compacted}). */
export interface CompactedLayout {
  /** The stored state it was made under (version, update time, coverage). */
  stamp: string;
  /** The summary message's place in the request (-1: a compaction that left no summary). */
  summaryAt: number;
  /** Its tokens. */
  summaryTokens: number;
  /**
   * The request in order (as written before {@link packed}; still read): runs `[from, to)` of the
   * caller's positions, or a message as sent (a rewrite). A record that has it is read by it,
   * whatever else it holds.
   */
  parts?: ([number, number] | { wire: unknown })[];
  /** The request in order, as written from then on (see {@link PackedLayout}). */
  packed?: PackedLayout;
  /** Messages of the view (not counting the summary). */
  entries: number;
  /** The cost trigger's pace: view messages after the newest one the compaction kept, and whether it was there. */
  paceAfter: number;
  paceFound: boolean;
}

/**
 * A layout's request as a few flat lists (a fresh process parses a few arrays of numbers, not
 * one small array per run, and builds the request from slices): the caller's positions in
 * `spans`, in order, the summary message between two of them, and, within them, the positions
 * `at` whose message went out rewritten, as `wires` (same order). Written without `parts`, so
 * that a version that reads only `parts` drops the record (full path) instead of misreading it.
 */
export interface PackedLayout {
  v: 1;
  /** Runs of the caller's positions, flat: `from, to` pairs (`[from, to)`), increasing. */
  spans: number[];
  /** Positions inside the spans sent rewritten, increasing. */
  at: number[];
  /** What went out at each of them. */
  wires: unknown[];
}

interface QuickState extends SessionState {
  quickResume?: QuickRecord;
}

/** The quick record of session `key` (`undefined`: none, malformed, or the store failed). */
export async function readQuickRecord(store: SessionStore, key: string): Promise<QuickRecord | undefined> {
  const inner = innerOf(store);
  if (!inner) return undefined;
  const record = (await bounded(() => inner.get(quickKey(key)))) as QuickState | undefined;
  const quick = record?.quickResume;
  if (!quick || typeof quick !== 'object') return undefined;
  const { sums } = quick;
  const numbers = [quick.length, quick.pinned, sums?.system, sums?.developer, sums?.messages];
  if (!numbers.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) return undefined;
  if (![quick.scope, quick.rule, quick.pins, quick.print].every((s) => typeof s === 'string'))
    return undefined;
  return quick;
}

/** Stores the quick record of session `key`; false when the store failed. */
export async function writeQuickRecord(
  store: SessionStore,
  key: string,
  quick: QuickRecord,
): Promise<boolean> {
  const inner = innerOf(store);
  if (!inner) return false;
  const record: QuickState = {
    sessionId: quickKey(key),
    version: 0,
    coveredIds: [],
    quickResume: quick,
    updatedAt: Date.now(),
  };
  return (await bounded(() => inner.set(quickKey(key), record))) === true;
}
