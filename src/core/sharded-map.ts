/**
 * Maps and sets spread over many small ones. A `Map` (a `Set`, a `WeakMap`) grows by copying
 * every entry into a table twice the size, in one call of `set`: past 100k entries that one
 * call holds the event loop 12-30 ms (the embedded summary's word counts of 300k tiny
 * messages, "hi 1" to "hi 300000"; the message index's parses of them). Spread over
 * {@link SHARDS} tables, each growth copies a sixty-fourth.
 */

import type { Steps } from './time-slice.js';

/** Tables a key's entries are spread over. */
const SHARDS = 64;

/**
 * The shard of a string: its length and at most twenty of its characters, sixteen spread
 * evenly over it and the last four, mixed (constant work per key; keys sharing a prefix or a
 * suffix, such as numbered words or joined texts ending alike, still spread).
 */
export function stringShard(key: string): number {
  const n = key.length;
  let h = n;
  if (n <= 20) for (let i = 0; i < n; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x9e3779b1);
  else {
    for (let i = 0; i < 16; i++) h = Math.imul(h ^ key.charCodeAt(((i * n) / 16) | 0), 0x9e3779b1);
    for (let i = n - 4; i < n; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x9e3779b1);
  }
  return (h >>> 26) % SHARDS;
}

/** The shard of a key: a string's {@link stringShard}, a number's low bits mixed. */
function shardOf(key: string | number): number {
  return typeof key === 'string' ? stringShard(key) : (Math.imul(key | 0, 0x9e3779b1) >>> 26) % SHARDS;
}

/**
 * A map of string (or number) keys whose growth never copies more than a small part of it at
 * once. Iteration goes shard by shard, not in the order set.
 */
export class ShardedMap<V, K extends string | number = string> {
  readonly #shards: Map<K, V>[] = Array.from({ length: SHARDS }, () => new Map<K, V>());

  get(key: K): V | undefined {
    return this.#shards[shardOf(key)]!.get(key);
  }

  has(key: K): boolean {
    return this.#shards[shardOf(key)]!.has(key);
  }

  set(key: K, value: V): this {
    this.#shards[shardOf(key)]!.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    return this.#shards[shardOf(key)]!.delete(key);
  }

  clear(): void {
    for (const shard of this.#shards) shard.clear();
  }

  get size(): number {
    let size = 0;
    for (const shard of this.#shards) size += shard.size;
    return size;
  }

  /** Every entry, shard by shard (not in the order set). */
  *entries(): IterableIterator<[K, V]> {
    for (const shard of this.#shards) yield* shard;
  }
}

/**
 * A set of strings spread over small sets, read as a `ReadonlySet`'s `has`, `size` and
 * iteration (shard by shard, not in the order added).
 */
export class ShardedSet {
  readonly #shards: Set<string>[] = Array.from({ length: SHARDS }, () => new Set<string>());

  has(key: string): boolean {
    return this.#shards[stringShard(key)]!.has(key);
  }

  add(key: string): this {
    this.#shards[stringShard(key)]!.add(key);
    return this;
  }

  get size(): number {
    let size = 0;
    for (const shard of this.#shards) size += shard.size;
    return size;
  }

  *[Symbol.iterator](): IterableIterator<string> {
    for (const shard of this.#shards) yield* shard;
  }
}

/** Keys added between two pauses of {@link shardedSetSteps}. */
const SET_STEP = 4_096;

/** A {@link ShardedSet} of `keys`, a pause every {@link SET_STEP} (`new Set` of 300k ids was one ~20 ms call). */
export function* shardedSetSteps(keys: readonly string[]): Steps<ShardedSet> {
  const set = new ShardedSet();
  for (let i = 0; i < keys.length; i++) {
    set.add(keys[i]!);
    if (i % SET_STEP === SET_STEP - 1) yield;
  }
  return set;
}

/**
 * A `WeakMap` spread over small ones, the shard of a key given by the caller from the key's
 * content (an object has no hash of its own to read). A key must be looked up in the shard it
 * was set in: a caller whose shard may change for a key (its content edited in place) finds
 * the entry with {@link findAnywhere}.
 */
export class ShardedWeakMap<K extends object, V> {
  /**
   * Each made on its first entry: an index emptied by `shutdown()` (a new map) holds no table
   * (64 empty `WeakMap`s were 9 KB of the heap after shutdown).
   */
  readonly #shards: (WeakMap<K, V> | undefined)[] = new Array(SHARDS).fill(undefined);

  /** The shard for a string read from the key (see {@link stringShard}); 0 for none. */
  static shardOf(text: string | undefined): number {
    return text === undefined ? 0 : stringShard(text);
  }

  get(shard: number, key: K): V | undefined {
    return this.#shards[shard]?.get(key);
  }

  set(shard: number, key: K, value: V): void {
    const map = this.#shards[shard];
    if (map === undefined) this.#shards[shard] = new WeakMap([[key, value]]);
    else map.set(key, value);
  }

  delete(shard: number, key: K): boolean {
    return this.#shards[shard]?.delete(key) ?? false;
  }

  /** The shard holding `key` with `value`, or -1. */
  findAnywhere(key: K, value: V): number {
    for (let shard = 0; shard < SHARDS; shard++) if (this.#shards[shard]?.get(key) === value) return shard;
    return -1;
  }
}
