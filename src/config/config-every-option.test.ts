import { describe, expect, it } from 'vitest';
import { CompactManager } from '../core/manager/compact-manager.js';
import { type CompactManagerOptions, MIN_CONTEXT_TOKENS } from '../core/manager/manager-options.js';
import { buildConfigJsonSchema } from './config-json-schema.js';
import { resolveConfig } from './load-config.js';
import { toManagerOptions } from './to-manager-options.js';

/**
 * Where a config file sets each manager option (a path in the config), or why it cannot: a
 * key of the manager's options missing here fails the type check.
 */
const CONFIG_KEY_OF = {
  model: 'model',
  maxContextTokens: 'max_context_tokens',
  policy: 'policy',
  summarizer: 'summarizer.provider',
  summarizerTimeoutMs: 'summarizer.total_timeout_ms',
  tokenCounter: 'code only: a counter object; a file selects it through model',
  store: 'sessions.store',
  storage: 'storage.adapter',
  exporters: 'telemetry.exporter',
  exportQueue: 'export_queue',
  redaction: 'redaction.enabled',
  customStrategies: 'code only: strategy functions',
  redactSummarizerInput: 'redaction.summarizer_input',
  background: 'background',
  preparationQueue: 'queue',
  preparationLead: 'preparation_lead',
  agents: 'agents',
  sessionLock: 'session_lock',
  storeTimeoutMs: 'sessions.store_timeout_ms',
  failOnStorageError: 'sessions.fail_on_storage_error',
  cacheMaxBytes: 'sessions.cache_max_bytes',
  requireArchive: 'storage.require_archive',
  archiveTimeoutMs: 'storage.archive_timeout_ms',
  pricing: 'pricing',
  clock: 'code only: a function (tests inject a fake clock)',
  summaryKeys: 'code only: secrets, given by the COMPACT_SUMMARY_KEY environment variable to config users',
} satisfies Record<keyof CompactManagerOptions, string>;

describe('a config key for every manager option', () => {
  it('names a config key in the JSON schema for every option a file can hold', () => {
    const schema = buildConfigJsonSchema() as { properties: Record<string, unknown> };
    const at = (path: string) =>
      path.split('.').reduce<unknown>((node, key) => {
        const object = node as { properties?: Record<string, unknown> } | undefined;
        return object?.properties?.[key];
      }, schema);
    const codeOnly = Object.entries(CONFIG_KEY_OF).filter(([, path]) => path.startsWith('code only'));
    expect(codeOnly.map(([option]) => option).sort()).toEqual([
      'clock',
      'customStrategies',
      'summaryKeys',
      'tokenCounter',
    ]);
    for (const [option, path] of Object.entries(CONFIG_KEY_OF)) {
      if (!path.startsWith('code only')) expect(at(path), `${option} -> ${path}`).toBeDefined();
    }
  });

  it('sessions.store: redis builds a Redis session store from the URL in the environment', async () => {
    const config = resolveConfig({ sessions: { store: 'redis', redis_key_prefix: 'app:' } });
    await expect(toManagerOptions(config, { env: {} })).rejects.toMatchObject({
      code: 'invalid_config',
      issues: [{ path: ['sessions', 'redis_url_env'] }],
    });
    const options = await toManagerOptions(config, { env: { REDIS_URL: 'redis://127.0.0.1:9/0' } });
    expect(typeof options.store?.get).toBe('function');
    expect((await toManagerOptions(resolveConfig({}))).store).toBeUndefined();
  });

  it('maps background, session_lock, export_queue and agents', async () => {
    const config = resolveConfig({
      background: true,
      session_lock: { ttl_ms: 5000 },
      export_queue: { max_size: 100, max_batch_size: 10, flush_interval_ms: 50, export_timeout_ms: 1000 },
      agents: {
        planner: { policy: { keep_recent_turns: 2, trigger_pct: 0.8 }, summarizer_timeout_ms: 4000 },
        executor: {},
      },
      policy: { prepare_at_pct: 0.6 },
      storage: { adapter: 'none' },
    });
    const options = await toManagerOptions(config);
    expect(options).toMatchObject({
      background: true,
      sessionLock: { ttlMs: 5000 },
      exportQueue: { maxSize: 100, maxBatchSize: 10, flushIntervalMs: 50, exportTimeoutMs: 1000 },
      agents: {
        planner: { policy: { keepRecentTurns: 2, triggerPct: 0.8 }, summarizerTimeoutMs: 4000 },
        executor: {},
      },
      policy: { prepareAtPct: 0.6 },
    });
    // An agent's policy holds only what it overrides (no defaults that would undo the top level).
    expect(Object.keys(options.agents.planner!.policy!).sort()).toEqual(['keepRecentTurns', 'triggerPct']);
    const manager = new CompactManager(options);
    expect(manager.budget).toBeGreaterThan(0);
    await manager.shutdown();
    expect((await toManagerOptions(resolveConfig({ session_lock: false }))).sessionLock).toBe(false);
    expect(await toManagerOptions(resolveConfig({}))).toMatchObject({ background: false, agents: {} });
  });

  it('rejects what it does not know, in a file as in code, with the same limits', () => {
    expect(() => resolveConfig({ agents: { a: { policy: { keep_recent: 2 } } } } as never)).toThrow(
      /keep_recent/,
    );
    expect(() => resolveConfig({ max_context_tokens: MIN_CONTEXT_TOKENS - 1 })).toThrow(/max_context_tokens/);
    expect(() => new CompactManager({ maxContextTokens: MIN_CONTEXT_TOKENS - 1 })).toThrow(
      expect.objectContaining({ code: 'invalid_config', message: expect.stringMatching(/maxContextTokens/) }),
    );
    expect(() => new CompactManager({ maxContextTokens: MIN_CONTEXT_TOKENS })).not.toThrow();
    expect(() => new CompactManager({ maxContextToken: 8000 } as never)).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        message: expect.stringMatching(/maxContextToken.*not a CompactManager option/),
      }),
    );
    expect(() => new CompactManager({ session_lock: true } as never)).toThrow(/did you mean sessionLock/);
  });
});
