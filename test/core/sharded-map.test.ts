/**
 * Issue 47 point 2: a string map of 300k words grew in one `set` that held the loop 30 ms;
 * `ShardedMap` spreads it over small maps. It behaves as a `Map`, and keys that differ only in
 * their last digits ("hi 1" to "hi 100000") spread over the shards (no timing asserted).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShardedMap } from '../../src/core/sharded-map.js';

describe('ShardedMap', () => {
  it('gets, sets and counts as a Map does', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 6 }), fc.integer())), (pairs) => {
        const sharded = new ShardedMap<number>();
        const plain = new Map<string, number>();
        for (const [key, value] of pairs) {
          sharded.set(key, value);
          plain.set(key, value);
        }
        expect(sharded.size).toBe(plain.size);
        for (const [key, value] of plain) expect(sharded.get(key)).toBe(value);
        expect(sharded.has('\u0000absent')).toBe(plain.has('\u0000absent'));
        expect(new Map(sharded.entries())).toEqual(plain);
      }),
    );
  });

  it('spreads numbered keys over its shards (no one map holds a large part)', () => {
    const sharded = new ShardedMap<number>();
    for (let i = 0; i < 100_000; i++) sharded.set(`${i}`, i);
    // Which shard holds a key is private: the entries come shard by shard, so runs of keys are
    // read off the order in which the entries come, against the order set.
    let shards = 0;
    let run = 0;
    let longest = 0;
    let last = -1;
    for (const [, value] of sharded.entries()) {
      if (value < last) {
        shards++;
        run = 0;
      }
      run++;
      longest = Math.max(longest, run);
      last = value;
    }
    expect(shards).toBeGreaterThanOrEqual(32);
    expect(longest).toBeLessThan(100_000 / 16);
  });
});
