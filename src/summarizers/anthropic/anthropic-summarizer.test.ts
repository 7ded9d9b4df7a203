import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { sampleRequest } from '../../../test/fixtures/summarizers/sample-session.js';
import { useProviderTestServer } from '../../../test/fixtures/summarizers/use-provider-test-server.js';
import type { SummarizerErrorReport } from '../../core/summary/summarizer.js';
import type { ProviderReply } from '../../testing/provider-test-server.js';
import { resilientSummarizer } from '../resilient-summarizer.js';
import { anthropicSummarizer } from './anthropic-summarizer.js';

const startServer = useProviderTestServer();

async function setup(handler: ProviderReply[], maxRetries = 0) {
  const started = await startServer({ handler });
  const client = new Anthropic({ baseURL: started.anthropicBaseURL, apiKey: 'sk-ant-test', maxRetries });
  return {
    server: started,
    summarizer: anthropicSummarizer({ model: 'claude-haiku-4-5', client, maxRetries }),
  };
}

type MessagesBody = {
  model: string;
  system: string;
  max_tokens: number;
  temperature?: number;
  messages: { content: string }[];
};

describe('anthropicSummarizer over the wire', () => {
  it('sends model, system, max_tokens and the rendered history; returns text, model, usage', async () => {
    const { server, summarizer } = await setup([
      { text: '## Goals\n- Migrate', usage: { inputTokens: 800, outputTokens: 9 } },
    ]);
    const result = await summarizer.summarize(sampleRequest({ maxTokens: 256 }));
    expect(result).toEqual({
      text: '## Goals\n- Migrate',
      summarizer: 'anthropic:claude-haiku-4-5',
      model: 'claude-haiku-4-5',
      usage: { inputTokens: 800, outputTokens: 9 },
    });
    const request = server.requests[0]!;
    expect(request.path).toBe('/v1/messages');
    expect(String(request.headers['x-api-key'] ?? request.headers.authorization)).toContain('sk-ant-test');
    const body = request.body as MessagesBody;
    expect(body).toMatchObject({ model: 'claude-haiku-4-5', max_tokens: 256 });
    expect(body).not.toHaveProperty('temperature');
    expect(body.system).toContain('Strategy: task_state');
    expect(body.messages[0]!.content).toContain('<- result [call_1]: CREATE TABLE invoices');
  });

  it('sends temperature when set, and builds its own client from apiKey and baseURL', async () => {
    const server = await startServer({ handler: [{ text: 'fine' }] });
    const summarizer = anthropicSummarizer({
      model: 'claude-3-haiku',
      apiKey: 'k2',
      baseURL: server.anthropicBaseURL,
      temperature: 0,
    });
    await summarizer.summarize(sampleRequest());
    expect(server.requests[0]!.body).toMatchObject({ temperature: 0 });
    expect(
      String(server.requests[0]!.headers['x-api-key'] ?? server.requests[0]!.headers.authorization),
    ).toContain('k2');
  });

  it('retries 429 then 500 with maxRetries 2 through the SDK', async () => {
    const { server, summarizer } = await setup(
      [
        { error: { status: 429, message: 'slow' } },
        { error: { status: 500, message: 'boom' } },
        { text: 'ok now' },
      ],
      2,
    );
    expect((await summarizer.summarize(sampleRequest())).text).toBe('ok now');
    expect(server.requests).toHaveLength(3);
  });

  it('stop_reason refusal retries once with brief, then throws summarizer_refused', async () => {
    const { server, summarizer } = await setup([{ finishReason: 'refusal' }, { finishReason: 'refusal' }]);
    const reports: SummarizerErrorReport[] = [];
    const error = await resilientSummarizer(summarizer)
      .summarize(sampleRequest({ reportError: (r) => reports.push(r) }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'summarizer_refused' });
    expect(server.requests).toHaveLength(2);
    expect((server.requests[1]!.body as MessagesBody).system).toContain('Strategy: brief');
    expect(reports).toHaveLength(1);
  });

  it('stop_reason max_tokens is summary_too_long; a 500 with maxRetries 0 is summarizer_failed', async () => {
    const { summarizer } = await setup([
      { text: 'cut', finishReason: 'length' },
      { error: { status: 500, message: 'down' } },
    ]);
    await expect(summarizer.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summary_too_long' });
    await expect(summarizer.summarize(sampleRequest())).rejects.toMatchObject({
      code: 'summarizer_failed',
      message: expect.stringContaining('HTTP 500'),
    });
  });

  it('malformed JSON and a missing content array are failures', async () => {
    const { summarizer } = await setup([
      { body: 'not json' },
      { json: { type: 'message', stop_reason: 'end_turn' } },
    ]);
    await expect(summarizer.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_failed' });
    await expect(summarizer.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_failed' });
  });

  it('times out a slow response', async () => {
    const { summarizer } = await setup([{ text: 'late', delayMs: 5_000 }]);
    await expect(
      resilientSummarizer(summarizer, { timeoutMs: 100 }).summarize(sampleRequest()),
    ).rejects.toMatchObject({
      code: 'summarizer_timeout',
    });
  });

  it('requires a model', () => {
    expect(() => anthropicSummarizer({ model: '' })).toThrow(
      expect.objectContaining({ code: 'invalid_config' }),
    );
  });
});
