/**
 * The storage and store time limits a config file can set: `storage.request_timeout_ms` (the
 * s3 adapter's `requestTimeoutMs`), `storage.archive_timeout_ms` (the manager's
 * `archiveTimeoutMs`) and `sessions.redis_close_timeout_ms` (the Redis store's
 * `closeTimeoutMs`). Each was accepted by code only; a bad value is `invalid_config` naming it.
 */
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { setAwsTestKeys } from '../../test/support/aws-test-keys.js';
import { isCompactError } from '../core/errors.js';
import { resolveConfig } from './load-config.js';
import { toManagerOptions } from './to-manager-options.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A TCP server that accepts connections and never answers (a stalled S3 endpoint). */
async function silentServer(): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

function configError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('storage and store time limits in the config file', () => {
  it('storage.request_timeout_ms reaches the s3 adapter: a silent endpoint fails as storage_failed', async () => {
    const endpoint = await silentServer();
    const restoreKeys = setAwsTestKeys('test');
    cleanups.push(async () => restoreKeys());
    const config = resolveConfig({
      storage: {
        adapter: 's3',
        bucket: 'b',
        region: 'us-east-1',
        endpoint,
        force_path_style: true,
        request_timeout_ms: 50,
        archive_timeout_ms: 600_000,
      },
    });
    const options = await toManagerOptions(config);
    expect(options.archiveTimeoutMs).toBe(600_000);
    const error = await options.storage!.saveTranscript('s', [{ role: 'user', content: 'hi' }], 1).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCompactError(error, 'storage_failed')).toBe(true);
    await options.storage!.close?.();
  });

  it('defaults: archive_timeout_ms 30000, the others left to the adapters', async () => {
    const config = resolveConfig({});
    expect(config.storage.archive_timeout_ms).toBe(30_000);
    expect(config.storage.request_timeout_ms).toBeUndefined();
    expect(config.sessions.redis_close_timeout_ms).toBeUndefined();
    expect((await toManagerOptions(config)).archiveTimeoutMs).toBe(30_000);
  });

  it.each([
    [{ storage: { request_timeout_ms: 0 } }, ['storage', 'request_timeout_ms']],
    [{ storage: { request_timeout_ms: 1.5 } }, ['storage', 'request_timeout_ms']],
    [{ storage: { archive_timeout_ms: 0 } }, ['storage', 'archive_timeout_ms']],
    [{ storage: { archive_timeout_ms: '100' } }, ['storage', 'archive_timeout_ms']],
    [{ sessions: { redis_close_timeout_ms: -1 } }, ['sessions', 'redis_close_timeout_ms']],
  ])('%j is invalid_config naming the field', (input, path) => {
    const error = configError(() => resolveConfig(input));
    expect(isCompactError(error, 'invalid_config')).toBe(true);
    expect((error as { issues: { path: unknown }[] }).issues.map((issue) => issue.path)).toContainEqual(path);
  });

  it('sessions.redis_close_timeout_ms is accepted and builds a Redis store', async () => {
    const config = resolveConfig({ sessions: { store: 'redis', redis_close_timeout_ms: 0 } });
    const options = await toManagerOptions(config, { env: { REDIS_URL: 'redis://127.0.0.1:9/0' } });
    expect(typeof options.store?.get).toBe('function');
  });
});
