/**
 * `npx tsx bench/session-store.ts`: what the session store costs per operation, in memory
 * and in a real redis-server on loopback (started here), with a state covering 2,000
 * messages: `get`, a compare-and-set, a lock round (acquire + release), and one compaction's
 * store traffic (acquire, get, fenced compare-and-set, release). p50 and p99 over 1,000 runs.
 */
import { MemorySessionStore, type SessionState, type SessionStore } from '../src/index.js';
import { redisSessionStore } from '../src/storage/redis/index.js';
import { startRedisServer } from '../test/support/redis-server.js';

const RUNS = 1000;

function stateOf(version: number): SessionState {
  return {
    sessionId: 'bench',
    version,
    summary: { text: 'Goal: ... '.repeat(300), tokens: 900, summarizer: 'embedded', createdAt: Date.now() },
    coveredIds: Array.from({ length: 2000 }, (_, i) => `msg-${i}`),
    keptIds: Array.from({ length: 40 }, (_, i) => `msg-${2000 + i}`),
    updatedAt: Date.now(),
  };
}

async function timed(run: (i: number) => Promise<unknown>): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run(i);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3);
  return `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`;
}

async function measure(store: SessionStore): Promise<void> {
  let version = 0;
  await store.set('bench', stateOf(0));
  console.log(`${store.name}: get                 ${await timed(() => store.get('bench'))}`);
  console.log(
    `${store.name}: compare-and-set     ${await timed(() => store.set('bench', stateOf(version + 1), { expectedVersion: version++ }))}`,
  );
  console.log(
    `${store.name}: acquire + release   ${await timed(async () => (await store.acquireLock('bench', 10_000))?.release())}`,
  );
  const compaction = await timed(async () => {
    const lock = await store.acquireLock('bench', 10_000);
    if (!lock) throw new Error('lock taken');
    const current = (await store.get('bench')) as SessionState;
    const ok = await store.set('bench', stateOf(current.version + 1), {
      expectedVersion: current.version,
      fencingToken: lock.token,
    });
    if (!ok) throw new Error('write refused');
    await lock.release();
  });
  console.log(`${store.name}: one compaction's store traffic ${compaction}`);
}

await measure(new MemorySessionStore());
const server = await startRedisServer();
const redis = redisSessionStore({ url: server.url });
try {
  await measure(redis);
} finally {
  await redis.close();
  await server.stop();
}
