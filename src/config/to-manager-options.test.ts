import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isCompactError } from '../core/errors.js';
import { CompactManager } from '../core/manager/compact-manager.js';
import { startProviderTestServer } from '../testing/provider-test-server.js';
import { resolveConfig } from './load-config.js';
import { exporterNamesOf, toManagerOptions, toRedactionOption } from './to-manager-options.js';

describe('toManagerOptions', () => {
  it('maps the defaults to camelCase manager options', async () => {
    const options = await toManagerOptions(resolveConfig({}));
    expect(options).toMatchObject({
      model: 'gpt-4o',
      maxContextTokens: 128_000,
      summarizerTimeoutMs: 30_000,
      exporters: [],
      redaction: true,
      policy: {
        preset: 'default',
        keepRecentTurns: 6,
        keepToolIoPairs: 4,
        rolesNeverPrune: ['system', 'developer'],
        protectedFlag: 'protected',
        strategy: 'task_state',
        maxSummaryTokens: 1024,
      },
    });
    expect(options.summarizer).toBeUndefined();
    expect(options.storage?.name).toBe('fs');
    expect(new CompactManager(options).budget).toBe(126_500);
  });

  it('builds exporters, s3 storage and provider summarizers from their factories', async () => {
    const config = resolveConfig({
      summarizer: {
        provider: 'anthropic',
        model: 'claude-haiku',
        prompts: { brief: 'Short: {remainder_messages}' },
      },
      telemetry: { exporter: ['console', 'ariadne', 'otlp', 'console'], console_format: 'json' },
      storage: {
        adapter: 's3',
        bucket: 'b',
        endpoint: 'http://127.0.0.1:9',
        force_path_style: true,
        region: 'us-east-1',
      },
      redaction: { extra_patterns: ['secret-[0-9]+'] },
    });
    expect(exporterNamesOf(config)).toEqual(['console', 'ariadne', 'otlp']);
    const options = await toManagerOptions(config);
    expect(options.exporters).toHaveLength(3);
    expect(options.storage?.name).toBe('s3');
    expect(options.summarizer?.name).toContain('claude-haiku');
    // One total budget: the manager's limit, and the wrapper's longest call.
    expect(options.summarizerTimeoutMs).toBe(30_000);
    expect(options.summarizer?.maxDurationMs).toBe(30_000);
    const tight = await toManagerOptions(
      resolveConfig({
        summarizer: {
          provider: 'anthropic',
          model: 'claude-haiku',
          timeout_ms: 20_000,
          total_timeout_ms: 8_000,
        },
        storage: { adapter: 'none' },
      }),
    );
    expect(tight.summarizerTimeoutMs).toBe(8_000);
    expect(tight.summarizer?.maxDurationMs).toBe(8_000);
    expect(options.redaction).toEqual({ extraPatterns: ['secret-[0-9]+'] });
    expect(toRedactionOption(resolveConfig({ redaction: { enabled: false } }))).toBe(false);
    expect(toRedactionOption(resolveConfig({ redaction: { patterns: ['x'] } }))).toEqual({ patterns: ['x'] });
    const none = await toManagerOptions(
      resolveConfig({ storage: { adapter: 'none' }, telemetry: { exporter: 'none' } }),
    );
    expect(none.storage).toBeUndefined();
    expect(none.exporters).toEqual([]);
  });

  it('drives a configured OpenAI summarizer end to end against a local server', async () => {
    const server = await startProviderTestServer({ handler: () => ({ text: 'Goals: ship it.' }) });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'compact-config-'));
      const config = resolveConfig(
        { summarizer: { provider: 'openai', model: 'gpt-4o-mini', seed: 7, api_key_env: 'MY_KEY' } },
        {
          env: {
            COMPACT_SUMMARIZER_BASE_URL: server.openaiBaseURL,
            COMPACT_STORAGE_PATH: dir,
            COMPACT_KEEP_RECENT_TURNS: '1',
          },
        },
      );
      const manager = new CompactManager(await toManagerOptions(config, { env: { MY_KEY: 'sk-local' } }));
      const messages = ['a', 'b', 'c'].flatMap((word) => [
        { role: 'user', content: `question ${word}` },
        { role: 'assistant', content: `answer ${word}` },
      ]);
      const result = await manager.manualCompact('cfg', messages);
      expect(result.summary?.text).toContain('Goals: ship it.');
      const body = server.requests[0]!.body as { model: string; seed: number };
      expect(body).toMatchObject({ model: 'gpt-4o-mini', seed: 7 });
      expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-local');
      await manager.shutdown();
    } finally {
      await server.close();
    }
  });

  it('uses an injected summarizer and storage', async () => {
    const summarizer = { name: 'mine', summarize: async () => ({ text: 'x' }) };
    const storage = {
      name: 'memory',
      saveTranscript: async () => 'a',
      saveSummary: async () => 'b',
      saveEvent: async () => {},
    };
    const options = await toManagerOptions(resolveConfig({ summarizer: { provider: 'openai' } }), {
      summarizer,
      storage,
    });
    expect(options.summarizer).toBe(summarizer);
    expect(options.storage).toBe(storage);
  });

  it('explains what a file cannot say', async () => {
    const aiSdk = await toManagerOptions(resolveConfig({ summarizer: { provider: 'ai-sdk' } })).catch(
      (e) => e,
    );
    expect(isCompactError(aiSdk, 'invalid_config')).toBe(true);
    expect(aiSdk.message).toContain('aiSdkModel');
    const missingKey = await toManagerOptions(
      resolveConfig({ summarizer: { provider: 'openai', api_key_env: 'NOPE' } }),
      {
        env: {},
      },
    ).catch((e) => e);
    expect(missingKey.message).toContain('NOPE');
  });
});
