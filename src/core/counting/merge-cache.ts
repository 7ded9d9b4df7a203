/**
 * `gpt-tokenizer`'s cache of merged pieces (`mergeCache`: piece to tokens, at most 100,000,
 * oldest out first), spread over {@link SHARDS} maps. One `Map` growing to 100,000 entries
 * rehashes all of them as it passes 32,768 and 65,536: 20-24 ms of CPU in one `set`, inside a
 * count (issue 47 point 2). A shard holds about 1,600. The cache only saves work: which pieces
 * it keeps never changes a count.
 */

/** Maps the cache is spread over (a power of two). */
const SHARDS = 64;

/** FNV-1a over the key's units: pieces of one shape (same ending, same length) still spread. */
function shardOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let at = 0; at < key.length; at++) hash = Math.imul(hash ^ key.charCodeAt(at), 0x01000193);
  return (hash ^ (hash >>> 16)) & (SHARDS - 1);
}

/** What the encoder uses of a `Map` for its merge cache. */
export class MergeCache<V> {
  readonly #shards: Map<string, V>[] = Array.from({ length: SHARDS }, () => new Map<string, V>());
  #size = 0;
  /** The shard whose oldest entry goes next (in turn, so every shard ages). */
  #evict = 0;

  get size(): number {
    return this.#size;
  }

  has(key: string): boolean {
    return this.#shards[shardOf(key)]!.has(key);
  }

  get(key: string): V | undefined {
    return this.#shards[shardOf(key)]!.get(key);
  }

  set(key: string, value: V): this {
    const shard = this.#shards[shardOf(key)]!;
    if (!shard.has(key)) this.#size++;
    shard.set(key, value);
    return this;
  }

  delete(key: string): boolean {
    const deleted = this.#shards[shardOf(key)]!.delete(key);
    if (deleted) this.#size--;
    return deleted;
  }

  clear(): void {
    for (const shard of this.#shards) shard.clear();
    this.#size = 0;
  }

  /**
   * The keys of the next non-empty shard in turn, oldest first: the encoder deletes the first
   * one when the cache is full (an old entry, if not the oldest of all).
   */
  keys(): IterableIterator<string> {
    for (let tried = 0; tried < SHARDS; tried++) {
      const shard = this.#shards[this.#evict]!;
      this.#evict = (this.#evict + 1) & (SHARDS - 1);
      if (shard.size > 0) return shard.keys();
    }
    return new Map<string, V>().keys();
  }

  /** Entries in each shard (tests). */
  shardSizes(): number[] {
    return this.#shards.map((shard) => shard.size);
  }
}
