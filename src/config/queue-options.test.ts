import { describe, expect, it } from 'vitest';
import { resolveConfig } from './load-config.js';
import { toManagerOptions } from './to-manager-options.js';

describe('queue: the preparation queue of a config', () => {
  it('maps queue to a BullMQ preparationQueue on the sessions Redis (nothing connects before the first job)', async () => {
    const config = resolveConfig({ sessions: { store: 'redis' }, queue: { name: 'prepare-openai' } });
    const options = await toManagerOptions(config, { env: { REDIS_URL: 'redis://127.0.0.1:9/0' } });
    expect(options.preparationQueue?.name).toBe('prepare-openai');
    expect((await toManagerOptions(resolveConfig({}))).preparationQueue).toBeUndefined();
  });

  it('needs sessions.store: redis and a URL, and a name without ":"', async () => {
    await expect(toManagerOptions(resolveConfig({ queue: {} }), { env: {} })).rejects.toMatchObject({
      code: 'invalid_config',
      issues: [{ path: ['sessions', 'store'] }],
    });
    const config = resolveConfig({ sessions: { store: 'redis' }, queue: { redis_url_env: 'QUEUE_URL' } });
    await expect(
      toManagerOptions(config, { env: { REDIS_URL: 'redis://127.0.0.1:9' } }),
    ).rejects.toMatchObject({
      code: 'invalid_config',
      issues: [{ path: ['queue', 'redis_url_env'] }],
    });
    expect(() => resolveConfig({ queue: { name: 'a:b' } })).toThrow(/queue\.name/);
  });
});
