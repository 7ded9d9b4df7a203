/**
 * Issue 38 point 5 with a real redis-server: stalled (SIGSTOP: it accepts and never answers,
 * and every client's commands wait in its queue) while three processes serve sessions through
 * it, one shared; then killed while a process is serving. The calls, `manager.shutdown()` and
 * the store's `close()` all settle while the server is still stopped or gone: they cannot have
 * been waiting for it. Each process reports the stall once.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { charCounter, chatTurns } from '../support/background-fixtures.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { ReportInbox } from './support/report-inbox.js';
import type { StallWorkerReport, StallWorkerRequest } from './support/stall-worker.js';

const WORKER = new URL('./support/stall-worker.ts', import.meta.url).pathname;
const withRedis = redisAvailable('Redis stall tests');
const keyPrefix = `stall:${randomUUID()}:`;
const inbox = new ReportInbox<StallWorkerReport>();
const children = new Map<string, ChildProcess>();
let server: RedisTestServer;

async function startWorker(id: string): Promise<void> {
  const child = fork(WORKER, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, REDIS_URL: server.url, KEY_PREFIX: keyPrefix, WORKER_ID: id },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.on('message', (report: StallWorkerReport) => inbox.push(report));
  children.set(id, child);
  await inbox.until((r) => r.type === 'ready' && r.worker === id);
}

function send(request: StallWorkerRequest): void {
  for (const child of children.values()) child.send(request);
}

type Calls = Extract<StallWorkerReport, { type: 'calls' }>;
const callsUpTo = (to: number) =>
  Promise.all(
    [...children.keys()].map(
      (id) => inbox.until((r) => r.type === 'calls' && r.worker === id && r.to === to) as Promise<Calls>,
    ),
  );

beforeAll(async () => {
  if (!withRedis) return;
  server = await startRedisServer();
  await Promise.all(['p1', 'p2', 'p3'].map(startWorker));
});

afterAll(async () => {
  for (const child of children.values()) if (child.connected) child.disconnect();
  await server?.stop();
});

describe.runIf(withRedis)('three processes through a stalled Redis', () => {
  it('every call settles while the server is stopped, each process reports the stall once, and shutdown and close settle too', async () => {
    send({ type: 'calls', from: 10, to: 30 });
    const healthy = await callsUpTo(30);
    const failedBefore = healthy.map((r) => r.storeEvents.length);

    process.kill(server.pid, 'SIGSTOP');
    try {
      // Compactions of the shared session take its lock; the stall comes with commands in flight.
      send({ type: 'calls', from: 31, to: 70 });
      const stalled = await callsUpTo(70);
      for (const [k, r] of stalled.entries()) {
        expect(r.storeEvents.slice(failedBefore[k]), r.worker).toEqual(['storage_failed']);
        console.log(`stalled Redis, ${r.worker}: ${r.calls} calls, slowest ${r.slowestMs.toFixed(0)} ms`);
      }
      // Settled while the server is still stopped: not one of them waited for it.
      send({ type: 'shutdown' });
      await Promise.all(
        [...children.keys()].map((id) => inbox.until((r) => r.type === 'closed' && r.worker === id)),
      );
    } finally {
      process.kill(server.pid, 'SIGCONT');
    }
  });
});

describe.runIf(withRedis)('shutdown after an outage', () => {
  it('manager.shutdown() and store.close() settle after the server stalled with commands in flight and died', async () => {
    const own = await startRedisServer();
    const store = redisSessionStore({ url: own.url, keyPrefix });
    const manager = new CompactManager({
      maxContextTokens: 10_000,
      tokenCounter: charCounter,
      policy: { keepRecentTurns: 2, hardCapBuffer: 500 },
      store,
    });
    const failures: string[] = [];
    manager.on('compact.error', (event) => failures.push(event.properties.errorType));
    for (let turns = 10; turns < 40; turns++) await manager.compact('s', chatTurns(turns));
    expect(failures).toEqual([]);
    process.kill(own.pid, 'SIGSTOP');
    // Commands go out and wait in the client's queue; the kept writes wait in the manager.
    for (let turns = 40; turns < 60; turns++) await manager.compact('s', chatTurns(turns));
    process.kill(own.pid, 'SIGKILL');
    await own.stop();
    for (let turns = 60; turns < 65; turns++) await manager.compact('s', chatTurns(turns));
    expect(failures).toEqual(['storage_failed']);
    await manager.shutdown();
    await store.close();
    // Closed: a later close settles too.
    await store.close();
  });
});
