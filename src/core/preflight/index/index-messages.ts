/**
 * Step 1 of a call: index the request's messages for its session (index-request.ts), check
 * their pairing, and reject or repair broken input (check-pairing.ts). A call that brings many
 * messages the session has not indexed (its first call of a long history) works in slices
 * that give the event loop a turn; a warm call's few new messages are indexed at once, unless
 * one holds a long string (hashed in slices too).
 */
import type { MessageCodec } from '../../messages/formats/message-codec.js';
import { hasLongString } from '../../messages/json-pieces.js';
import type { MessageIndex } from '../../messages/message-index.js';
import type { TimeSlice } from '../../time-slice.js';
import { type InputRepair, pairingRepair } from './check-pairing.js';
import type { IndexedHistories, IndexedHistory } from './index-request.js';

/**
 * New messages (not yet indexed for the session) past which a call indexes and counts in
 * slices: fewer take well under a slice.
 */
export const SLICED_FROM = 64;

/** What step 1 reads of the pipeline. */
export interface IndexDeps {
  readonly histories: IndexedHistories;
  readonly index: MessageIndex;
}

/** What step 1 reads of the call. */
export interface IndexInput {
  readonly key: string;
  readonly messages: readonly unknown[];
  readonly codec: MessageCodec;
  readonly policy: { readonly repairInput: boolean };
}

/** Step 1's result: the indexed history (the repaired one when repaired) and the repairs made. */
export interface IndexedRequest {
  indexed: IndexedHistory;
  repairs: InputRepair[];
}

/** True when `input` brings more than {@link SLICED_FROM} messages its session has not indexed. */
export function manyNewMessages(deps: IndexDeps, input: IndexInput): boolean {
  return input.messages.length - deps.histories.heldLength(input.key) > SLICED_FROM;
}

/**
 * True when a message `input` brings past the session's indexed ones holds a long string (a
 * tool result of megabytes): a warm call that appends it hashes and counts it in slices.
 */
export function newLongMessage(deps: IndexDeps, input: IndexInput): boolean {
  const { messages } = input;
  for (let i = deps.histories.heldLength(input.key); i < messages.length; i++)
    if (hasLongString(messages[i])) return true;
  return false;
}

/**
 * Messages the session's index grows by between two looks at the clock in
 * {@link indexMessagesInSlices}: each step's update (ids, chain links, pairing, and the sample
 * of older positions it checks) runs in one piece; 256 of them held the loop 6-9 ms on a
 * loaded machine, beside the parses of the same slice.
 */
const PREFIX_STEP = 128;

/** Where a repaired history is indexed (beside the session's own). */
export const repairedKey = (key: string) => `${key}\u0000repaired`;

/** Step 1 at once. */
export function indexMessages(deps: IndexDeps, input: IndexInput): IndexedRequest {
  const { key, messages, codec } = input;
  const { indexed } = deps.histories.update(key, messages, codec, deps.index);
  const repaired = pairingRepair(messages, indexed, codec.format, input.policy.repairInput);
  if (!repaired) return { indexed, repairs: [] };
  const fixed = deps.histories.update(repairedKey(key), repaired.history, codec, deps.index);
  return { indexed: fixed.indexed, repairs: repaired.repairs };
}

/**
 * Step 1 in slices, with the same result as {@link indexMessages}: the session's index grows
 * a prefix of the history at a time (each prefix an append to the last, as a warm call's
 * history), its messages parsed and hashed first, a turn of the loop whenever `slice` has run
 * its time.
 */
export async function indexMessagesInSlices(
  deps: IndexDeps,
  input: IndexInput,
  slice: TimeSlice,
): Promise<IndexedRequest> {
  const { key, messages, codec } = input;
  const indexed = await growInSlices(deps, key, messages, codec, slice);
  const repaired = pairingRepair(messages, indexed, codec.format, input.policy.repairInput);
  if (!repaired) return { indexed, repairs: [] };
  const fixed = await growInSlices(deps, repairedKey(key), repaired.history, codec, slice);
  return { indexed: fixed, repairs: repaired.repairs };
}

/** Indexes `history` for `key` a prefix at a time; `changedFrom` is the first position this call changed. */
async function growInSlices(
  deps: IndexDeps,
  key: string,
  history: readonly unknown[],
  codec: MessageCodec,
  slice: TimeSlice,
): Promise<IndexedHistory> {
  let changedFrom = Number.POSITIVE_INFINITY;
  for (let end = deps.histories.heldLength(key); end < history.length; ) {
    const next = Math.min(history.length, end + PREFIX_STEP);
    // The parses are kept by object identity: the update below finds them.
    for (let i = end; i < next; i++) {
      const made = deps.index.entryInSlices(history[i], i, codec, slice);
      if (made instanceof Promise) await made;
      if (slice.due()) await slice.pause();
    }
    if (next === history.length) break;
    // Dropped in a pause (other sessions' calls evicted it, or it ended): the rest is indexed at
    // once below, rather than regrown from the start after every pause.
    if (deps.histories.heldLength(key) < end) break;
    changedFrom = Math.min(
      changedFrom,
      // The prefix as a length, not a copy: a copy per step made O(n^2 / 256) garbage (156 MB
      // at 100k messages), scavenged in pauses of the loop.
      deps.histories.update(key, history, codec, deps.index, next).changedFrom,
    );
    end = next;
    if (slice.due()) await slice.pause();
  }
  const { indexed } = deps.histories.update(key, history, codec, deps.index);
  indexed.changedFrom = Math.min(changedFrom, indexed.changedFrom);
  return indexed;
}
