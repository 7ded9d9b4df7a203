/**
 * Issue 46 point 5: lifecycle. An agent process whose Redis store was built from its config
 * exits by itself after `manager.shutdown()`; a worker pointed at a Redis that does not
 * answer says so at once (before any job) and keeps retrying until Redis is there.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startPreparationWorker } from '../../src/queue/index.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { freePort, type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const withRedis = redisAvailable('lifecycle tests');
const servers: RedisTestServer[] = [];
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(servers.map((server) => server.stop()));
});

describe.runIf(withRedis)('lifecycle (issue 46.5)', () => {
  it('an agent whose store came from its config exits after manager.shutdown()', async () => {
    const server = await startRedisServer();
    servers.push(server);
    const child = fork(new URL('./support/agent-exits.ts', import.meta.url).pathname, [], {
      execArgv: ['--import', 'tsx'],
      // An archive of its own (the config's default is .compact/archive in the working folder):
      // one left by an earlier run would set the session's version floor.
      env: {
        ...process.env,
        REDIS_URL: server.url,
        COMPACT_STORAGE_PATH: mkdtempSync(join(tmpdir(), 'agent-exits-')),
      },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    children.push(child);
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    // The process exits on its own: nothing (a Redis connection) keeps it alive.
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(out).toMatch(/shut down v1/);
    expect(code).toBe(0);
  });

  it('a worker says it cannot reach Redis before any job, and connects once Redis is there', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const store = redisSessionStore({ url });
    const errors: string[] = [];
    let told: () => void = () => {};
    const firstError = new Promise<void>((resolve) => {
      told = resolve;
    });
    const starting = startPreparationWorker({
      connection: url,
      store,
      name: 'lifecycle-unreachable',
      onConnectionError: (message) => {
        errors.push(message);
        told();
      },
    });
    await firstError;
    expect(errors[0]).toMatch(/cannot reach Redis/);
    // Redis comes up on that port: the retrying worker connects and starts.
    const server = await startRedisServer({ port });
    servers.push(server);
    const worker = await starting;
    await worker.close();
    await store.close();
    expect(errors.length).toBeGreaterThanOrEqual(1);
  });
});
