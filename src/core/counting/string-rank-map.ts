/**
 * The rank of each BPE token string, as `gpt-tokenizer`'s encoder looks it up
 * (`bytePairStringRankEncoder.get`), spread over {@link SHARDS} maps of a few thousand entries.
 *
 * One `Map` of 200,000 entries, filled in slices, still held the loop in one step: the `set`
 * that passes 131,072 entries rehashes the whole table at once (40-90 ms measured on a busy
 * machine, issue 47 point 2). A shard's own growth rehashes at most a few thousand entries.
 */

/** Maps the table is spread over (a power of two). */
const SHARDS = 64;

/** The shard of `key`: its last character and its length (o200k: 1,100-5,500 keys a shard). */
function shardOf(key: string): number {
  // An empty key gives NaN, which `& 63` reads as 0.
  return (key.charCodeAt(key.length - 1) * 31 + key.length) & (SHARDS - 1);
}

/** Token string to rank, the part of `Map` the encoder uses (`get`), filled with `set`. */
export class StringRankMap {
  readonly shards: Map<string, number>[] = Array.from({ length: SHARDS }, () => new Map<string, number>());

  get(key: string): number | undefined {
    return this.shards[shardOf(key)]!.get(key);
  }

  set(key: string, rank: number): this {
    this.shards[shardOf(key)]!.set(key, rank);
    return this;
  }

  get size(): number {
    let size = 0;
    for (const shard of this.shards) size += shard.size;
    return size;
  }
}
