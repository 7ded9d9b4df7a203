/**
 * A map of string keys spread over many small `Map`s. A `Map` grows by copying every entry
 * into a table twice the size, in one call of `set`: past 100k entries that one call holds
 * the event loop 15-30 ms (the embedded summary's word counts of 300k tiny messages, "hi 1"
 * to "hi 300000"). Spread over {@link SHARDS} maps, each growth copies a sixty-fourth.
 */

/** Maps a key's entries are spread over. */
const SHARDS = 64;

/** A string map whose growth never copies more than a small part of it at once. */
export class ShardedMap<V> {
  readonly #shards: Map<string, V>[] = Array.from({ length: SHARDS }, () => new Map<string, V>());

  /** The shard of `key`: its length and last four characters, mixed. */
  #shard(key: string): Map<string, V> {
    let h = key.length;
    for (let i = key.length - 1, n = 0; i >= 0 && n < 4; i--, n++)
      h = Math.imul(h ^ key.charCodeAt(i), 0x9e3779b1);
    return this.#shards[(h >>> 26) % SHARDS]!;
  }

  get(key: string): V | undefined {
    return this.#shard(key).get(key);
  }

  has(key: string): boolean {
    return this.#shard(key).has(key);
  }

  set(key: string, value: V): this {
    this.#shard(key).set(key, value);
    return this;
  }

  get size(): number {
    let size = 0;
    for (const shard of this.#shards) size += shard.size;
    return size;
  }

  /** Every entry, shard by shard (not in the order set). */
  *entries(): IterableIterator<[string, V]> {
    for (const shard of this.#shards) yield* shard;
  }
}
