/**
 * `agent-compaction worker` stops on SIGTERM while Redis is stalled (SIGSTOP: the server accepts
 * and never answers), with exit 0: before, it waited until the server answered again (the
 * worker's close at a stalled Redis, worker-close-stalled.test.ts). Real process, real
 * redis-server of its own (it is stopped).
 */

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const withRedis = redisAvailable('agent-compaction worker at a stalled Redis');
let server: RedisTestServer;
let dir: string;

beforeAll(async () => {
  if (!withRedis) return;
  server = await startRedisServer();
  dir = await mkdtemp(join(tmpdir(), 'compact-worker-stalled-'));
});

afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.runIf(withRedis)('agent-compaction worker at a stalled Redis', () => {
  it('stops on SIGTERM while the server is still stopped', { timeout: 60_000 }, async () => {
    const config = join(dir, 'compact.yaml');
    await writeFile(config, `sessions:\n  store: redis\nqueue:\n  name: cli-${randomUUID()}\n`);
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'worker', '--config', config], {
      env: { ...process.env, REDIS_URL: server.url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      let text = '';
      child.stderr.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('worker listening on queue')) resolve();
      });
    });
    process.kill(server.pid, 'SIGSTOP');
    try {
      child.kill('SIGTERM');
      // The server runs again only after the worker exited (finally): before, it never did.
      expect(await exited).toBe(0);
    } finally {
      process.kill(server.pid, 'SIGCONT');
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
