/**
 * Issue 46 point 5: the `agent-compaction worker` command says it cannot reach Redis before
 * its config, store and bullmq are loaded (loading them takes most of a second on a loaded
 * machine). Here the config's loading never ends, so only a command that probes Redis before
 * it can tell. Isolated (vitest.config.ts): the mock must not reach the other tests.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { CliIo } from '../../src/cli/cli-io.js';
import { freePort } from '../support/redis-server.js';

vi.mock('../../src/config/index.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/config/index.js')>();
  return { ...actual, loadConfig: () => new Promise<never>(() => {}) };
});

const { runWorkerCommand } = await import('../../src/cli/worker-command.js');
const dirs: string[] = [];

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function configDir(yaml: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'compact-worker-early-'));
  dirs.push(dir);
  await writeFile(join(dir, 'compact.yaml'), yaml);
  return dir;
}

/** The worker command's first stderr line (it never ends here: the config never loads). */
function firstLine(dir: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const io: CliIo = {
      stdin: process.stdin,
      stdout: () => {},
      stderr: resolve,
      env,
      cwd: dir,
    };
    runWorkerCommand('compact.yaml', false, io).catch(reject);
  });
}

describe('the worker command at an unreachable Redis', () => {
  it('says so before its config is loaded', async () => {
    const dir = await configDir('sessions:\n  store: redis\nqueue:\n  name: early\n');
    const line = await firstLine(dir, { REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    expect(line).toMatch(
      /^the worker cannot reach Redis at 127\.0\.0\.1:\d+ \(.+\); retrying with backoff\n$/,
    );
  });
});
