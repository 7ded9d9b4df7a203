/**
 * Two real CLI processes on one `--state FILE` at once (two shells compacting the same
 * session): both read the same state and the last to write won (two texts of one summary
 * version). Now the first run holds `FILE.lock` until it has written the state back: the
 * second fails at once with `concurrent_compaction`, and runs again afterwards from the
 * first's state. A lock left by a dead run (same host, pid gone) is broken and taken.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { type BinRun, ensureBuilt, ROOT, runBin } from './support/built-cli.js';

let dir: string;
beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'agent-compaction-state-lock-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const fixture = join(ROOT, 'test/fixtures/transcripts', 'swe-agent-marshmallow.json');

/** Starts `node dist/cli/main.js ...args` in `dir` with `env` added; resolves when it exits. */
const startBin = (args: readonly string[], env: Record<string, string>): Promise<BinRun> =>
  runBin(args, undefined, { cwd: dir, env });

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

it('two CLI runs on one --state file: the second fails with concurrent_compaction, then resumes', async () => {
  let arrived!: () => void;
  const firstArrived = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const server = await startProviderTestServer({
    handler: async () => {
      arrived();
      await gate;
      return { text: '## Goal\nFix the marshmallow bug.\n## Progress\nRead the code; found the cause.' };
    },
  });
  try {
    const state = join(dir, 'state.json');
    const env = {
      COMPACT_SUMMARIZER: 'openai',
      COMPACT_SUMMARIZER_BASE_URL: server.openaiBaseURL,
      COMPACT_SUMMARIZER_API_KEY_ENV: 'STATE_LOCK_TEST_KEY',
      STATE_LOCK_TEST_KEY: 'sk-test',
      COMPACT_STORAGE: 'none',
    };
    const args = [
      'compact',
      fixture,
      '--max-context',
      '5000',
      '--buffer',
      '300',
      '--force',
      '--state',
      state,
    ];
    const first = startBin(args, env);
    await firstArrived; // the first run holds the lock: it is summarizing
    const second = await startBin(args, env);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(/in use by another run \(pid \d+/);
    expect(second.stdout).toBe('');
    open();
    const done = await first;
    expect(done.code, done.stderr).toBe(0);
    expect(await exists(`${state}.lock`)).toBe(false);
    const v1 = JSON.parse(await readFile(state, 'utf8')) as { version: number };
    // Run again once the first has ended: it resumes from the first run's state.
    const again = await startBin(args, env);
    expect(again.code, again.stderr).toBe(0);
    const v2 = JSON.parse(await readFile(state, 'utf8')) as { version: number };
    expect(v2.version).toBe(v1.version + 1);
    expect(await exists(`${state}.lock`)).toBe(false);
  } finally {
    await server.close();
  }
});

it('a lock left by a dead run on this host is broken and taken', async () => {
  const state = join(dir, 'stale.json');
  const dead = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => dead.once('exit', resolve));
  const lock = {
    pid: dead.pid,
    host: hostname(),
    token: 'left-by-a-crash',
    since: '2026-01-01T00:00:00.000Z',
  };
  await writeFile(`${state}.lock`, JSON.stringify(lock));
  const run = await startBin(
    ['compact', fixture, '--max-context', '5000', '--buffer', '300', '--force', '--state', state],
    {
      COMPACT_STORAGE: 'none',
    },
  );
  expect(run.code, run.stderr).toBe(0);
  expect(await exists(`${state}.lock`)).toBe(false);
  expect(JSON.parse(await readFile(state, 'utf8'))).toMatchObject({ version: 1 });
});

it('a lock held on another host is never broken', async () => {
  const state = join(dir, 'remote.json');
  const lock = {
    pid: 1,
    host: `${hostname()}-elsewhere`,
    token: 'remote',
    since: '2026-01-01T00:00:00.000Z',
  };
  await writeFile(`${state}.lock`, JSON.stringify(lock));
  const run = await startBin(
    ['compact', fixture, '--max-context', '5000', '--buffer', '300', '--force', '--state', state],
    {
      COMPACT_STORAGE: 'none',
    },
  );
  expect(run.code).not.toBe(0);
  expect(run.stderr).toMatch(/in use by another run \(pid 1 on .*-elsewhere/);
  expect(await exists(state)).toBe(false);
});
