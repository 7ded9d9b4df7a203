/**
 * Issue 47 point 1: warm from the first call. A session's token counts are kept with its state
 * in the user's store (memory, a file, Redis), so that a fresh manager (a new process) on a
 * known session tokenizes none of its history again, and sends exactly what the manager that
 * served the session all along sends: the same bytes, count and version.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countsKey } from '../../src/core/store/stored-counts.js';
import {
  CompactManager,
  EmbeddedSummarizer,
  MemorySessionStore,
  type SessionState,
  type SessionStore,
} from '../../src/index.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';
import { jsonFileStore } from '../support/json-file-store.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const options = {
  model: 'gpt-4o',
  maxContextTokens: 32_000,
  summaryKeys: 'stored-counts-test-key-0123456789abcdef',
  failOnStorageError: true,
} as const;

/** Messages the manager tokenized in its call (`countedFresh` of its token estimate). */
async function callCounting(manager: CompactManager, history: unknown[]) {
  let countedFresh = -1;
  const off = manager.on('compact.token_estimate', (event) => {
    countedFresh = event.properties.countedFresh;
  });
  const result = await manager.compact('s', history);
  off();
  return { result, countedFresh };
}

/**
 * A warm manager's session, then a fresh manager on the same store and the same history. From
 * 1,000 messages (`turns` 300) a first call with many uncounted messages decides from a bound
 * (bound-first-call.ts): the stored counts leave it one, so it counts exactly.
 */
async function warmThenFresh(store: SessionStore, turns = 160) {
  const history = syntheticSession({ turns, seed: 21, toolDensity: 2.5, resultChars: 700 });
  const warm = new CompactManager({ ...options, store, summarizer: new EmbeddedSummarizer() });
  // The first call counts the whole history and compacts it.
  const first = await warm.compact('s', history);
  expect(first.applied).toBe(true);
  const next = [...history, { role: 'user', content: 'and now run the tests again' }];
  const sent = await callCounting(warm, next);
  expect(sent.result.applied).toBe(false);
  // Waits for the counts written after the calls.
  await warm.shutdown();
  const fresh = new CompactManager({ ...options, store, summarizer: new EmbeddedSummarizer() });
  const again = await callCounting(fresh, JSON.parse(JSON.stringify(next)));
  await fresh.shutdown();
  return { history: next, sent, again };
}

describe('token counts kept with the session state', () => {
  it('a fresh manager on a stored session (memory) tokenizes none of it and sends the same request', async () => {
    const store = new MemorySessionStore();
    const { history, sent, again } = await warmThenFresh(store);
    expect(history.length).toBeGreaterThan(600);
    expect(JSON.stringify(again.result.messages)).toBe(JSON.stringify(sent.result.messages));
    expect(again.result.tokensBefore).toBe(sent.result.tokensBefore);
    expect(again.result.version).toBe(sent.result.version);
    // Only the appended message is new to the record (it was written after the first call).
    expect(again.countedFresh).toBeLessThanOrEqual(1);
    expect((await store.get(countsKey('s')))?.version).toBe(0);
  });

  it.each([160, 300])('the same through a file store (%i turns)', async (turns) => {
    const dir = await mkdtemp(join(tmpdir(), 'stored-counts-'));
    try {
      const { history, sent, again } = await warmThenFresh(jsonFileStore(dir), turns);
      if (turns === 300) expect(history.length).toBeGreaterThan(1_000);
      expect(JSON.stringify(again.result.messages)).toBe(JSON.stringify(sent.result.messages));
      expect(again.result.tokensBefore).toBe(sent.result.tokensBefore);
      expect(again.result.version).toBe(sent.result.version);
      expect(again.countedFresh).toBeLessThanOrEqual(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a long session (over 1,000 messages) in memory: the fresh manager sends what the warm one sends', async () => {
    const store = new MemorySessionStore();
    const { history, sent, again } = await warmThenFresh(store, 300);
    expect(history.length).toBeGreaterThan(1_000);
    expect(JSON.stringify(again.result.messages)).toBe(JSON.stringify(sent.result.messages));
    expect(again.result.tokensBefore).toBe(sent.result.tokensBefore);
    expect(again.result.version).toBe(sent.result.version);
    expect(again.countedFresh).toBeLessThanOrEqual(1);
    // Its counts record deleted: the bound of its uncovered messages may be over the trigger,
    // so they are counted exactly, and the answer is the same.
    await store.delete(countsKey('s'));
    const fresh = new CompactManager({ ...options, store, summarizer: new EmbeddedSummarizer() });
    const recounted = await callCounting(fresh, JSON.parse(JSON.stringify(history)));
    await fresh.shutdown();
    expect(recounted.countedFresh).toBeGreaterThan(0);
    expect(JSON.stringify(recounted.result.messages)).toBe(JSON.stringify(sent.result.messages));
    expect(recounted.result.tokensBefore).toBe(sent.result.tokensBefore);
  });

  it('a record of another counter or a corrupt one is ignored: the counts are made again, the answer is the same', async () => {
    const store = new MemorySessionStore();
    const { sent } = await warmThenFresh(store);
    const record = (await store.get(countsKey('s'))) as SessionState & {
      tokenCounts: { scope: string; hashes: string; tokens: string };
    };
    // Every stored count doubled, under another scope: never read.
    const doubled = record.tokenCounts.tokens
      .split(' ')
      .map((n) => String(2 * Number(n)))
      .join(' ');
    for (const tokenCounts of [
      { ...record.tokenCounts, scope: 'cl100k_base|gpt-4|openai-chat', tokens: doubled },
      { ...record.tokenCounts, tokens: '1 2 3' },
    ]) {
      await store.set(countsKey('s'), { ...record, tokenCounts } as SessionState);
      const fresh = new CompactManager({ ...options, store, summarizer: new EmbeddedSummarizer() });
      const again = await callCounting(fresh, JSON.parse(JSON.stringify(sent.result.messages)));
      await fresh.shutdown();
      expect(again.countedFresh).toBeGreaterThan(100);
    }
  });

  it('the record is rewritten as the history grows by an eighth, not on every call; a store that fails it costs nothing', async () => {
    const inner = new MemorySessionStore();
    let countWrites = 0;
    let failCounts = false;
    const store: SessionStore = {
      name: 'counting',
      get: (id) =>
        failCounts && id.endsWith('::counts') ? Promise.reject(new Error('down')) : inner.get(id),
      set: async (id, state, options) => {
        if (id.endsWith('::counts')) {
          countWrites++;
          if (failCounts) throw new Error('down');
        }
        return inner.set(id, state, options);
      },
      delete: (id) => inner.delete(id),
      acquireLock: (id, ttl) => inner.acquireLock(id, ttl),
    };
    const history = syntheticSession({ turns: 120, seed: 5, toolDensity: 1, resultChars: 200 });
    const manager = new CompactManager({ ...options, maxContextTokens: 1_000_000, store });
    let end = 300;
    while (history[end]?.role !== 'user') end++;
    const grown = history.slice(0, end);
    await manager.compact('s', grown);
    for (let i = 0; i < 200; i++) {
      grown.push({ role: 'user', content: `step ${i}` });
      await manager.compact('s', grown);
      // The model call: turns of the event loop, where the writes run.
      for (let k = 0; k < 3; k++) await new Promise((resolve) => setImmediate(resolve));
    }
    await manager.shutdown();
    // About 300 messages, then 256 more: two writes for 201 calls.
    expect(countWrites).toBeGreaterThanOrEqual(1);
    expect(countWrites).toBeLessThanOrEqual(2);
    // The record's reads and writes fail: the answers are the same as with a healthy store.
    failCounts = true;
    const healthy = new CompactManager({ ...options, maxContextTokens: 1_000_000 });
    const failing = new CompactManager({ ...options, maxContextTokens: 1_000_000, store });
    const expected = await healthy.compact('s', grown);
    const got = await failing.compact('s', JSON.parse(JSON.stringify(grown)));
    expect(JSON.stringify(got.messages)).toBe(JSON.stringify(expected.messages));
    expect(got.tokensBefore).toBe(expected.tokensBefore);
    await healthy.shutdown();
    await failing.shutdown();
  });

  it('reset deletes the record', async () => {
    const store = new MemorySessionStore();
    await warmThenFresh(store);
    expect(await store.get(countsKey('s'))).toBeDefined();
    const manager = new CompactManager({ ...options, store });
    await manager.reset('s');
    await manager.shutdown();
    expect(await store.get(countsKey('s'))).toBeUndefined();
  });
});

const withRedis = redisAvailable('stored counts through Redis');
describe.runIf(withRedis)('token counts kept in Redis', () => {
  let server: RedisTestServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each([160, 300])(
    'a fresh manager on a session stored in Redis tokenizes none of it and sends the same request (%i turns)',
    async (turns) => {
      const store = redisSessionStore({ url: server.url });
      try {
        await store.delete('s');
        await store.delete(countsKey('s'));
        const { sent, again } = await warmThenFresh(store, turns);
        expect(JSON.stringify(again.result.messages)).toBe(JSON.stringify(sent.result.messages));
        expect(again.result.tokensBefore).toBe(sent.result.tokensBefore);
        expect(again.result.version).toBe(sent.result.version);
        expect(again.countedFresh).toBeLessThanOrEqual(1);
      } finally {
        await store.close();
      }
    },
  );
});
