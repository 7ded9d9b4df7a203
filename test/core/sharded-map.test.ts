/**
 * Issue 47 point 2: a string map of 300k words grew in one `set` that held the loop 30 ms;
 * `ShardedMap` spreads it over small maps. It behaves as a `Map`, and keys that differ only in
 * their last digits ("hi 1" to "hi 100000") spread over the shards (no timing asserted).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openaiChatCodec } from '../../src/core/messages/formats/openai-chat.js';
import { MessageIndex } from '../../src/core/messages/message-index.js';
import {
  ShardedMap,
  ShardedSet,
  ShardedWeakMap,
  shardedSetSteps,
  stringShard,
} from '../../src/core/sharded-map.js';
import { runSteps } from '../../src/core/time-slice.js';

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

  it('spreads keys that share a long suffix (joined texts ending alike) over its shards', () => {
    // The redactor's memo of joined neighbour texts: each key ends in the same words.
    const counts = new Map<number, number>();
    for (let i = 0; i < 20_000; i++) {
      const shard = stringShard(`hi ${i}\n\nhi ${i + 1} and the same closing words of a seam`);
      counts.set(shard, (counts.get(shard) ?? 0) + 1);
    }
    expect(counts.size).toBeGreaterThanOrEqual(32);
    expect(Math.max(...counts.values())).toBeLessThan(20_000 / 16);
  });

  it('deletes, clears and takes number keys as a Map does', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.constantFrom('set', 'delete'), fc.integer({ min: -5, max: 2 ** 31 }), fc.integer()),
        ),
        (ops) => {
          const sharded = new ShardedMap<number, number>();
          const plain = new Map<number, number>();
          for (const [op, key, value] of ops) {
            if (op === 'set') {
              sharded.set(key, value);
              plain.set(key, value);
            } else expect(sharded.delete(key)).toBe(plain.delete(key));
          }
          expect(new Map(sharded.entries())).toEqual(plain);
          sharded.clear();
          expect(sharded.size).toBe(0);
        },
      ),
    );
  });

  it('a sharded set holds what a Set holds', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 6 })), (keys) => {
        const sharded = runSteps(shardedSetSteps(keys));
        const plain = new Set(keys);
        expect(sharded.size).toBe(plain.size);
        expect(new Set(sharded)).toEqual(plain);
        for (const key of keys) expect(sharded.has(key)).toBe(true);
        expect(sharded.has('\u0000absent')).toBe(false);
        expect(new ShardedSet().add('a').has('a')).toBe(true);
      }),
    );
  });

  it('a sharded weak map finds a key in the shard it was set in, or anywhere', () => {
    const map = new ShardedWeakMap<object, number>();
    const key = {};
    map.set(ShardedWeakMap.shardOf('x'), key, 1);
    expect(map.get(ShardedWeakMap.shardOf('x'), key)).toBe(1);
    expect(map.findAnywhere(key, 1)).toBe(ShardedWeakMap.shardOf('x'));
    expect(map.findAnywhere(key, 2)).toBe(-1);
    expect(map.delete(ShardedWeakMap.shardOf('x'), key)).toBe(true);
    expect(map.findAnywhere(key, 1)).toBe(-1);
  });

  it('a sharded weak map holds no table before its first entry (an index emptied by shutdown)', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heapUsed = () => {
      for (let i = 0; i < 3; i++) gc();
      return process.memoryUsage().heapUsed;
    };
    const before = heapUsed();
    const maps = Array.from({ length: 1_000 }, () => new ShardedWeakMap<object, number>());
    // Main made its 64 WeakMaps up front: 8.8 MB for these (9 KB per emptied index).
    const held = heapUsed() - before;
    expect(maps).toHaveLength(1_000);
    expect(held, `${(held / 1024).toFixed(0)} KB`).toBeLessThan(1024 * 1024);
  });

  it('the message index forgets a message whose block was edited in place since (its shard moved)', () => {
    const codec = openaiChatCodec;
    const index = new MessageIndex();
    const block = { type: 'text', text: 'first words' };
    const raw = { role: 'user', content: [block] };
    const entry = index.entry(raw, 0, codec);
    expect(index.entry(raw, 0, codec)).toBe(entry);
    block.text = 'edited in place';
    index.forget([entry]);
    block.text = 'first words';
    // Forgotten by identity and by content: a parse of its own again.
    expect(index.entry(raw, 0, codec)).not.toBe(entry);
  });

  it('the message index emptied as by shutdown parses and finds messages again', () => {
    const codec = openaiChatCodec;
    const index = new MessageIndex();
    const history = [
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
    ];
    const ids = index.index(history, codec).map((message) => message.id);
    index.clear();
    expect(index.size).toBe(0);
    const again = index.index(history, codec);
    expect(again.map((message) => message.id)).toEqual(ids);
    // Found by identity in its shard, made on this first entry after the clear.
    expect(index.entry(history[0], 0, codec)).toBe(index.entry(history[0], 0, codec));
    expect(index.size).toBe(2);
  });
});
