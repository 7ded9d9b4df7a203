import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyRedisUrl } from './early-probe.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'compact-early-url-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function urlFor(name: string, text: string, env: Record<string, string> = {}) {
  await writeFile(join(dir, name), text);
  return earlyRedisUrl(name, { REDIS_URL: 'redis://r:6379', ...env }, dir);
}

describe('earlyRedisUrl: the URL a worker config names, known before loading it', () => {
  it('is REDIS_URL for a YAML or JSON file that leaves redis_url_env at its default', async () => {
    expect(await urlFor('a.yaml', 'sessions:\n  store: redis\nqueue:\n  name: q\n')).toBe('redis://r:6379');
    expect(await urlFor('a.json', '{"sessions":{"store":"redis"},"queue":{}}')).toBe('redis://r:6379');
  });

  it('is not known when the file, an override or the file kind could name another variable', async () => {
    expect(await urlFor('b.yaml', 'sessions:\n  store: redis\n  redis_url_env: OTHER\n')).toBeUndefined();
    expect(await urlFor('c.yaml', 'queue:\n  redis_url_env: OTHER\n')).toBeUndefined();
    // An escape could spell the key without writing it.
    expect(await urlFor('d.json', '{"queue":{"redis\\u005furl_env":"OTHER"}}')).toBeUndefined();
    expect(await urlFor('e.yaml', 'queue: {}\n', { COMPACT_REDIS_URL_ENV: 'OTHER' })).toBeUndefined();
    expect(await urlFor('f.yaml', 'queue: {}\n', { COMPACT_QUEUE_REDIS_URL_ENV: 'OTHER' })).toBeUndefined();
    expect(await urlFor('g.mjs', 'export default { queue: {} };\n')).toBeUndefined();
    expect(await earlyRedisUrl('missing.yaml', { REDIS_URL: 'redis://r:6379' }, dir)).toBeUndefined();
    expect(await earlyRedisUrl('a.yaml', {}, dir)).toBeUndefined();
  });
});
