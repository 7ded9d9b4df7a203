import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { migrationHistory as history } from '../../test/fixtures/summarizers/migration-history.js';
import { useProviderTestServer } from '../../test/fixtures/summarizers/use-provider-test-server.js';
import type { AnyCompactEvent } from '../core/events/events.js';
import { CompactManager } from '../core/manager/compact-manager.js';
import type { ProviderReply } from '../testing/provider-test-server.js';
import { resetCircuitBreakers } from './circuit-breaker.js';
import { openaiSummarizer } from './openai/openai-summarizer.js';
import { resilientSummarizer } from './resilient-summarizer.js';

const startServer = useProviderTestServer();
beforeEach(() => resetCircuitBreakers());

async function managerWith(handler: ProviderReply[] | ((n: number) => ProviderReply)) {
  const started = await startServer({
    handler: Array.isArray(handler) ? handler : (request) => handler(request.seq),
  });
  const client = new OpenAI({ baseURL: started.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 });
  const summarizer = resilientSummarizer(openaiSummarizer({ model: 'gpt-4o-mini', client, maxRetries: 0 }), {
    // Generous: no test here is about timeouts, and a loaded CI machine took over 2 s for a retry.
    timeoutMs: 60_000,
    circuitBreaker: { failureThreshold: 3, cooldownMs: 60_000 },
  });
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 8_000,
    summarizer,
    policy: { keepRecentTurns: 2, maxSummaryTokens: 300 },
  });
  const events: AnyCompactEvent[] = [];
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  return { server: started, manager, events };
}

const errorsOf = (events: AnyCompactEvent[]) =>
  events
    .filter((e) => e.name === 'compact.error')
    .map((e) => e.properties as { errorType: string; fallback: string });

describe('fallback chain through CompactManager', () => {
  it('an LLM summary over the wire lands in the compacted context', async () => {
    const { manager, events } = await managerWith([
      { text: '## Goals\n- Migrate tables t_0..t_9 on feat/pg15' },
    ]);
    const result = await manager.manualCompact('s1', history());
    expect(result.summary?.summarizer).toBe('openai:gpt-4o-mini');
    expect(JSON.stringify(result.messages)).toContain('Migrate tables t_0..t_9 on feat/pg15');
    const created = events.find((e) => e.name === 'compact.summary_created')!.properties as {
      model?: string;
      usage?: unknown;
    };
    expect(created.model).toBe('gpt-4o-mini');
    expect(created.usage).toBeDefined();
    await manager.shutdown();
  });

  it('a 500 falls back to the embedded summarizer with a compact.error event; the error is never the summary', async () => {
    const { manager, events } = await managerWith([{ error: { status: 500, message: 'upstream exploded' } }]);
    const result = await manager.manualCompact('s1', history());
    expect(result.applied).toBe(true);
    expect(result.summary?.summarizer).not.toBe('openai:gpt-4o-mini');
    expect(JSON.stringify(result.messages)).not.toContain('upstream exploded');
    expect(errorsOf(events)).toContainEqual(
      expect.objectContaining({ errorType: 'summarizer_failed', fallback: result.summary!.summarizer }),
    );
    await manager.shutdown();
  });

  it('after 3 failures the circuit opens: the LLM is skipped and a circuit_open event says so', async () => {
    const { server, manager, events } = await managerWith(() => ({
      error: { status: 429, message: 'rate limited' },
    }));
    for (let i = 0; i < 3; i++) await manager.manualCompact('s1', history());
    expect(server.requests).toHaveLength(3);
    await manager.manualCompact('s1', history());
    expect(server.requests).toHaveLength(3);
    expect(errorsOf(events)).toContainEqual(
      expect.objectContaining({ errorType: 'circuit_open', fallback: 'embedded' }),
    );
    // The breaker is per provider and model: another session skips the LLM too.
    await manager.manualCompact('s2', history());
    expect(server.requests).toHaveLength(3);
    await manager.shutdown();
  });

  it('refusal then success: the retry event and the brief summary', async () => {
    const { manager, events } = await managerWith([
      { refusal: 'no' },
      { text: '- tables migrated on feat/pg15 [#1]' },
    ]);
    const result = await manager.manualCompact('s1', history());
    expect(result.summary?.summarizer).toBe('openai:gpt-4o-mini');
    expect(errorsOf(events)).toEqual([
      expect.objectContaining({ errorType: 'summarizer_refused', fallback: 'retry_brief' }),
    ]);
    await manager.shutdown();
  });
});
