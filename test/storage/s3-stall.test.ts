/**
 * A stalled S3 server (a real s3rver, SIGSTOPped: it holds the connections and never answers).
 * The s3 adapter's requests had no time limit (the SDK sets none), so the first call that
 * archived a transcript before pruning waited for it for good: the conversation stopped, and
 * `shutdown()` (waiting for the writes in flight) with it. Now each request is given up after
 * `requestTimeoutMs`: the write fails as `storage_failed`, the manager reports it once and the
 * call goes on without the archive.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { isCompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { s3Storage } from '../../src/storage/s3/s3-storage.js';
import { charCounter, chatTurns } from '../support/manager-fixtures.js';

const serverScript = new URL('./support/s3rver-process.cjs', import.meta.url).pathname;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Starts s3rver in a child process; resolves its endpoint once it listens. */
async function startS3rver(bucket: string): Promise<{ child: ChildProcess; endpoint: string }> {
  const directory = await mkdtemp(join(tmpdir(), 's3-stall-'));
  const child = spawn(process.execPath, [serverScript, directory, bucket], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanups.push(async () => {
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await exited;
    await rm(directory, { recursive: true, force: true });
  });
  const port = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /PORT (\d+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', () => reject(new Error(`s3rver exited: ${output}`)));
  });
  return { child, endpoint: `http://127.0.0.1:${port}` };
}

it('a stalled S3 server: a call that archives before pruning is answered, shutdown settles', async () => {
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  cleanups.push(async () => {
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    else process.env.AWS_ACCESS_KEY_ID = saved.id;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
  });
  const { child, endpoint } = await startS3rver('stalled');
  const storage = s3Storage({
    bucket: 'stalled',
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    requestTimeoutMs: 300,
  });
  const manager = new CompactManager({
    maxContextTokens: 100_000,
    tokenCounter: charCounter,
    policy: { userTextShare: 0 },
    storage,
  });
  const errors: string[] = [];
  manager.on('compact.error', (event) =>
    errors.push(String((event.properties as { message: string }).message)),
  );
  const history = chatTurns(20, 30);
  expect((await manager.manualCompact('chat', history.slice(0, 12))).version).toBe(1);
  await manager.flush();
  child.kill('SIGSTOP');
  const stalled = await manager.manualCompact('chat', history.slice(0, 16));
  expect(stalled.version).toBe(2);
  expect(JSON.stringify(stalled.messages)).toContain('<COMPACT-SUMMARY v2>');
  await manager.shutdown();
  expect(errors.at(-1)).toMatch(/archive failed: .*s3: could not put/);
  const direct = await storage.saveEvent('chat', { name: 'x' } as never).catch((error: unknown) => error);
  expect(isCompactError(direct, 'storage_failed')).toBe(true);
}, 60_000);
