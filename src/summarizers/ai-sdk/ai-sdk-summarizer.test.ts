import { createOpenAI } from '@ai-sdk/openai';
import { describe, expect, it } from 'vitest';
import { sampleRequest } from '../../../test/fixtures/summarizers/sample-session.js';
import { useProviderTestServer } from '../../../test/fixtures/summarizers/use-provider-test-server.js';
import type { ProviderReply } from '../../testing/provider-test-server.js';
import { resilientSummarizer } from '../resilient-summarizer.js';
import { aiSdkSummarizer } from './ai-sdk-summarizer.js';

const startServer = useProviderTestServer();

async function setup(handler: ProviderReply[], maxRetries = 0) {
  const started = await startServer({ handler });
  const provider = createOpenAI({ baseURL: started.openaiBaseURL, apiKey: 'sk-test' });
  return {
    server: started,
    summarizer: aiSdkSummarizer({ model: provider.chat('gpt-4o-mini'), maxRetries }),
  };
}

type ChatBody = {
  model: string;
  seed: number;
  temperature: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  messages: { role: string; content: string }[];
};

describe('aiSdkSummarizer over the wire (@ai-sdk/openai chat)', () => {
  it('sends model, seed, temperature, max tokens and the history; returns text, model, usage', async () => {
    const { server, summarizer } = await setup([
      { text: '- fact [#1]', usage: { inputTokens: 700, outputTokens: 5 } },
    ]);
    const result = await summarizer.summarize(sampleRequest({ maxTokens: 222 }));
    expect(result).toEqual({
      text: '- fact [#1]',
      summarizer: 'ai-sdk:openai.chat:gpt-4o-mini',
      model: 'gpt-4o-mini',
      usage: { inputTokens: 700, outputTokens: 5 },
    });
    const body = server.requests[0]!.body as ChatBody;
    expect(body).toMatchObject({ model: 'gpt-4o-mini', seed: 42, temperature: 0 });
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(222);
    expect(body.messages[0]).toMatchObject({ role: 'system' });
    expect(JSON.stringify(body.messages[1])).toContain('Migrate the billing service');
  });

  it('retries a 429 and a 500 with maxRetries 2', async () => {
    const { server, summarizer } = await setup(
      [
        { error: { status: 429, message: 'slow' } },
        { error: { status: 500, message: 'boom' } },
        { text: 'third time' },
      ],
      2,
    );
    expect((await summarizer.summarize(sampleRequest())).text).toBe('third time');
    expect(server.requests).toHaveLength(3);
  });

  it('maps content-filter to a refusal (retried with brief) and length to summary_too_long', async () => {
    const { server, summarizer } = await setup([
      { text: 'x', finishReason: 'content_filter' },
      { text: '- ok [#1]' },
      { text: 'cut', finishReason: 'length' },
    ]);
    expect((await resilientSummarizer(summarizer).summarize(sampleRequest())).text).toBe('- ok [#1]');
    expect((server.requests[1]!.body as ChatBody).messages[0]!.content).toContain('Strategy: brief');
    await expect(summarizer.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summary_too_long' });
  });

  it('a 500 with maxRetries 0 and malformed JSON are summarizer_failed', async () => {
    const { summarizer } = await setup([
      { error: { status: 500, message: 'down' } },
      { body: '{"choices": [' },
    ]);
    await expect(summarizer.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_failed' });
    await expect(summarizer.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_failed' });
  });

  it('times out a hanging response', async () => {
    const { summarizer } = await setup([{ hang: true }]);
    await expect(
      resilientSummarizer(summarizer, { timeoutMs: 100 }).summarize(sampleRequest()),
    ).rejects.toMatchObject({
      code: 'summarizer_timeout',
    });
  });

  it('accepts an injected generateText and a gateway model id', async () => {
    const calls: unknown[] = [];
    const summarizer = aiSdkSummarizer({
      model: 'openai/gpt-4o-mini',
      generateText: (async (options: unknown) => {
        calls.push(options);
        return { text: 'from injected', finishReason: 'stop', usage: {}, response: {} };
      }) as never,
    });
    expect(summarizer.name).toBe('ai-sdk:gateway:openai/gpt-4o-mini');
    const result = await summarizer.summarize(sampleRequest());
    expect(result).toEqual({
      text: 'from injected',
      summarizer: summarizer.name,
      model: 'openai/gpt-4o-mini',
    });
    expect(calls[0]).toMatchObject({
      model: 'openai/gpt-4o-mini',
      seed: 42,
      temperature: 0,
      maxOutputTokens: 300,
    });
  });
});
