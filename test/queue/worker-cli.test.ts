/**
 * `agent-compaction worker --config compact.yaml` as a real process over a real redis-server:
 * it summarizes an agent's job with the configured (built-in) summarizer and publishes it; the
 * agent's trigger swaps it in and names it (`queue:embedded`) in its event and in
 * `status --store redis`; SIGTERM stops the worker with exit 0.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { chatTurns } from '../support/background-fixtures.js';
import { freePort, type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { type Agent, settled, startAgent } from './support/queue-fleet.js';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const withRedis = redisAvailable('agent-compaction worker CLI tests');
let server: RedisTestServer;
let dir: string;
let agent: Agent | undefined;
let worker: ChildProcess | undefined;

beforeAll(async () => {
  if (!withRedis) return;
  server = await startRedisServer();
  dir = await mkdtemp(join(tmpdir(), 'compact-worker-'));
});

afterAll(async () => {
  if (worker && worker.exitCode === null) worker.kill('SIGKILL');
  await agent?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Resolves with the text once `stream` has written a line matching `match`. */
function lineOf(stream: NodeJS.ReadableStream, match: RegExp): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const line = text.split('\n').find((l) => match.test(l));
      if (line === undefined) return;
      stream.off('data', onData);
      resolve(line);
    };
    stream.on('data', onData);
  });
}

describe.runIf(withRedis)('agent-compaction worker', () => {
  it('runs the configured summarizer on the queue, publishes, and stops on SIGTERM', async () => {
    const queue = `cli-${randomUUID()}`;
    // The default prefix, which status --store redis reads (this file has its own server).
    const keyPrefix = 'agent-compaction:session:';
    const config = join(dir, 'compact.yaml');
    await writeFile(
      config,
      `max_context_tokens: 10000\nsessions:\n  store: redis\nqueue:\n  name: ${queue}\n  concurrency: 2\n  rate_limit: { max: 10, duration_ms: 1000 }\n`,
    );
    worker = spawn(process.execPath, ['--import', 'tsx', MAIN, 'worker', '--config', config, '--json'], {
      env: { ...process.env, REDIS_URL: server.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => worker!.once('exit', (code) => resolve(code)));
    expect(await lineOf(worker.stderr!, /worker listening on queue/)).toContain(`${queue} (concurrency 2)`);

    agent = startAgent(server.url, keyPrefix, queue);
    const history = chatTurns(200);
    const published = lineOf(worker.stdout!, /"result"/);
    await agent.manager.compact('s', history.slice(0, 72));
    await settled(agent);
    expect(JSON.parse(await published)).toMatchObject({
      jobId: 'prep-s-v0',
      result: 'published',
      attempt: 1,
    });

    const events: AnyCompactEvent[] = [];
    agent.manager.on('compact.summary_created', (event) => events.push(event));
    const result = await agent.manager.compact('s', history.slice(0, 90));
    expect(result.summary?.summarizer).toBe('queue:embedded');
    expect(events.map((e) => (e.name === 'compact.summary_created' ? e.properties.summarizer : ''))).toEqual([
      'queue:embedded',
    ]);

    let out = '';
    const io = {
      stdin: process.stdin,
      stdout: (text: string) => {
        out += text;
      },
      stderr: () => {},
      env: { REDIS_URL: server.url },
    };
    const code = await runCli(['status', 's', '--store', 'redis'], io);
    expect(code, out).toBe(0);
    expect(out).toContain('queue:embedded (prepared by a queue worker)');

    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('says once that it cannot reach Redis, then listens once Redis is there', async () => {
    const port = await freePort();
    const config = join(dir, 'unreachable.yaml');
    await writeFile(config, `sessions:\n  store: redis\nqueue:\n  name: cli-${randomUUID()}\n`);
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'worker', '--config', config], {
      env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${port}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const listening = lineOf(child.stderr, /worker listening on queue/);
    await lineOf(child.stderr, /cannot reach Redis/);
    const late = await startRedisServer({ port });
    try {
      await listening;
      // The command's own probe and the worker's telling of it are one line; so is the outage.
      expect(stderr.match(/cannot reach Redis/g), stderr).toHaveLength(1);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await late.stop();
    }
  });
});
