import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sampleRequest } from '../../test/fixtures/summarizers/sample-session.js';
import type { SummarizerCircuitReport } from '../core/summary/summarizer.js';
import { type ProviderTestServer, startProviderTestServer } from '../testing/provider-test-server.js';
import { resetCircuitBreakers } from './circuit-breaker.js';
import { openaiSummarizer } from './openai/openai-summarizer.js';
import { breakerKey, resilientSummarizer } from './resilient-summarizer.js';

const servers: ProviderTestServer[] = [];
beforeEach(() => resetCircuitBreakers());
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function summarizerAt(server: ProviderTestServer, key?: string) {
  const inner = openaiSummarizer({
    model: 'gpt-4o-mini',
    client: new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 }),
    maxRetries: 0,
  });
  return resilientSummarizer(inner, {
    circuitBreaker: { failureThreshold: 2, cooldownMs: 60_000, ...(key === undefined ? {} : { key }) },
  });
}

describe('one circuit breaker per endpoint', () => {
  it('a failing self-hosted endpoint does not open the breaker of a healthy one with the same model', async () => {
    const down = await startProviderTestServer({
      handler: () => ({ error: { status: 503, message: 'down' } }),
    });
    const up = await startProviderTestServer({ handler: () => ({ text: '## Goals\n- keep going' }) });
    servers.push(down, up);
    const failing = summarizerAt(down);
    const healthy = summarizerAt(up);
    const circuits: SummarizerCircuitReport[] = [];
    const request = () =>
      sampleRequest({ reportCircuit: (report: SummarizerCircuitReport) => circuits.push(report) });
    for (let i = 0; i < 3; i++) await failing.summarize(request()).catch(() => undefined);
    expect(down.requests).toHaveLength(2); // the third was skipped: its breaker is open
    expect(circuits.find((c) => c.transition === 'open')?.key).toBe(
      `openai:gpt-4o-mini@${down.openaiBaseURL}`,
    );
    const result = await healthy.summarize(request());
    expect(result.text).toContain('keep going');
    expect(up.requests).toHaveLength(1);
  });

  it('a custom key still lets two endpoints share one breaker', async () => {
    const down = await startProviderTestServer({
      handler: () => ({ error: { status: 503, message: 'down' } }),
    });
    const up = await startProviderTestServer({ handler: () => ({ text: '## Goals\n- keep going' }) });
    servers.push(down, up);
    const failing = summarizerAt(down, 'openai:shared');
    const healthy = summarizerAt(up, 'openai:shared');
    for (let i = 0; i < 2; i++) await failing.summarize(sampleRequest()).catch(() => undefined);
    await expect(healthy.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_failed' });
    expect(up.requests).toHaveLength(0);
    expect(breakerKey({ name: 'embedded' })).toBe('embedded');
  });
});
