/**
 * A stalled S3 server (a real s3rver, SIGSTOPped: it holds the connections and never answers).
 * The s3 adapter's requests had no time limit (the SDK sets none), so the first call that
 * archived a transcript before pruning waited for it for good: the conversation stopped, and
 * `shutdown()` (waiting for the writes in flight) with it. Now each request is given up after
 * `requestTimeoutMs`: the write fails as `storage_failed`, the manager reports it once and the
 * call goes on without the archive. A write the manager gives up first (`archiveTimeoutMs`)
 * has its request aborted through the write's signal.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { isCompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { s3Storage } from '../../src/storage/s3/s3-storage.js';
import { setAwsTestKeys } from '../support/aws-test-keys.js';
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

/** A manager archiving to a fresh s3rver; `stall()` SIGSTOPs the server. */
async function stalledSetup(bucket: string, requestTimeoutMs: number, archiveTimeoutMs?: number) {
  const restoreKeys = setAwsTestKeys('S3RVER');
  cleanups.push(async () => restoreKeys());
  const { child, endpoint } = await startS3rver(bucket);
  const storage = s3Storage({
    bucket,
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    requestTimeoutMs,
  });
  const manager = new CompactManager({
    maxContextTokens: 100_000,
    tokenCounter: charCounter,
    policy: { userTextShare: 0 },
    storage,
    ...(archiveTimeoutMs === undefined ? {} : { archiveTimeoutMs }),
  });
  const errors: string[] = [];
  manager.on('compact.error', (event) =>
    errors.push(String((event.properties as { message: string }).message)),
  );
  const history = chatTurns(20, 30);
  expect((await manager.manualCompact('chat', history.slice(0, 12))).version).toBe(1);
  await manager.flush();
  child.kill('SIGSTOP');
  return { storage, manager, errors, history };
}

it('a stalled S3 server: a call that archives before pruning is answered, shutdown settles', async () => {
  const { storage, manager, errors, history } = await stalledSetup('stalled', 300);
  const stalled = await manager.manualCompact('chat', history.slice(0, 16));
  expect(stalled.version).toBe(2);
  expect(JSON.stringify(stalled.messages)).toContain('<COMPACT-SUMMARY v2>');
  await manager.shutdown();
  expect(errors.at(-1)).toMatch(/archive failed: .*s3: could not put/);
  const direct = await storage.saveEvent('chat', { name: 'x' } as never).catch((error: unknown) => error);
  expect(isCompactError(direct, 'storage_failed')).toBe(true);
}, 60_000);

it('a write given up by archiveTimeoutMs has its S3 request aborted, long before requestTimeoutMs', async () => {
  // requestTimeoutMs far beyond the test's time: only the write's signal can end the request.
  const { storage, manager, errors, history } = await stalledSetup('aborted', 600_000, 1_000);
  const stalled = await manager.manualCompact('chat', history.slice(0, 16));
  expect(stalled.version).toBe(2);
  // Reported once per outage: by the stalled call, or earlier by a write slow on a loaded machine.
  expect(errors.join('\n')).toMatch(/archive write did not settle within 1000 ms/);
  // shutdown waits for the adapter's requests in flight: each was aborted with its write.
  await manager.shutdown();
  const controller = new AbortController();
  const direct = storage.saveEvent('chat', { name: 'x' } as never, { signal: controller.signal });
  controller.abort(new Error('given up'));
  const error = await direct.catch((e: unknown) => e);
  expect(isCompactError(error, 'storage_failed')).toBe(true);
  expect(String((error as Error).message)).toMatch(/^s3: could not put s3:\/\/aborted\/chat\/events\//);
}, 60_000);
