/**
 * The hashes of a message's JSON the index keys it by: its identity (the JSON without `meta`)
 * and its content key (that JSON, then `meta`'s), at once or, for a message with long strings,
 * a piece at a time across turns of the loop (the same values).
 */
import type { TimeSlice } from '../time-slice.js';
import { hashLanes, LaneHasher } from './hash-string.js';
import { jsonPieces, splitJson } from './json-pieces.js';

/** A message's JSON length and hashes (lanes as unsigned 32-bit integers). */
export interface JsonHash {
  readonly length: number;
  readonly high: number;
  readonly low: number;
  /** The lanes of the content key's hash (the identity's when there is no `meta`). */
  readonly contentHigh: number;
  readonly contentLow: number;
}

/** The hashes of `json` (the message's JSON without `meta`) and its `meta`. */
export function hashJson(json: string, meta: unknown): JsonHash {
  const lanes = hashLanes(json);
  const high = lanes[0]!;
  const low = lanes[1]!;
  if (meta !== undefined) hashLanes(`${json}\u0000${JSON.stringify(meta)}`);
  return { length: json.length, high, low, contentHigh: lanes[0]!, contentLow: lanes[1]! };
}

/**
 * {@link hashJson} of `raw`'s JSON, computed a piece at a time with a turn of the loop whenever
 * `slice` is due; `undefined` when `raw` has no long string (hashed whole, in one short stretch).
 */
export async function hashJsonInSlices(raw: object, slice: TimeSlice): Promise<JsonHash | undefined> {
  const split = splitJson(raw);
  if (split === undefined) return undefined;
  const meta = (raw as Record<string, unknown>).meta;
  await touchInTurnsOfTheirOwn(split.longs, slice);
  const hasher = new LaneHasher();
  let length = 0;
  for (const piece of jsonPieces(split)) {
    hasher.update(piece);
    length += piece.length;
    if (slice.due()) await slice.pause();
  }
  let lanes = hasher.digest();
  const high = lanes[0]!;
  const low = lanes[1]!;
  if (meta !== undefined) {
    hasher.update(`\u0000${JSON.stringify(meta)}`);
    lanes = hasher.digest();
  }
  return { length, high, low, contentHigh: lanes[0]!, contentLow: lanes[1]! };
}

/** Written by {@link touchInTurnsOfTheirOwn} so that its reads are not left out. */
let _touched = 0;

/**
 * Reads one character of each long string, each in a turn of its own. A string the caller built
 * by concatenation (a rope) is copied into one flat string the first time any of its characters
 * is read, in one stretch (~8 ms for 10 MB, more under load): that copy is not cut, but nothing
 * else runs in its turn.
 */
async function touchInTurnsOfTheirOwn(longs: readonly string[], slice: TimeSlice): Promise<void> {
  for (const long of longs) {
    await slice.pause();
    _touched ^= long.charCodeAt(0);
  }
}
