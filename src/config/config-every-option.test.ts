import { describe, expect, it } from 'vitest';
import { CompactManager } from '../core/compact-manager.js';
import { MIN_CONTEXT_TOKENS } from '../core/manager-options.js';
import { resolveConfig } from './load-config.js';
import { toManagerOptions } from './to-manager-options.js';

describe('a config key for every manager option', () => {
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
