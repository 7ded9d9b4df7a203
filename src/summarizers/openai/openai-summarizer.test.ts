import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { INJECTION, sampleRequest } from '../../../test/fixtures/summarizers/sample-session.js';
import { useProviderTestServer } from '../../../test/fixtures/summarizers/use-provider-test-server.js';
import { until } from '../../../test/support/until.js';
import type { SummarizerErrorReport } from '../../core/summary/summarizer.js';
import type { ProviderReply } from '../../testing/provider-test-server.js';
import { resilientSummarizer } from '../resilient-summarizer.js';
import { openaiSummarizer } from './openai-summarizer.js';

const startServer = useProviderTestServer();

async function setup(handler: ProviderReply[], maxRetries = 0) {
  const server = await startServer({ handler });
  const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries });
  return { server, client, summarizer: openaiSummarizer({ model: 'gpt-4o-mini', client, maxRetries }) };
}

type ChatBody = {
  model: string;
  seed: number;
  temperature: number;
  max_completion_tokens?: number;
  max_tokens?: number;
  messages: { role: string; content: string }[];
};

describe('openaiSummarizer over the wire', () => {
  it('sends model, seed, temperature, max tokens and the rendered history; returns text, model, usage', async () => {
    const { server, summarizer } = await setup([
      {
        text: '## Goals\n- Migrate billing to Postgres 15',
        usage: { inputTokens: 900, outputTokens: 12 },
        model: 'gpt-4o-mini-2024-07-18',
      },
    ]);
    const result = await summarizer.summarize(sampleRequest({ maxTokens: 250 }));
    expect(result).toEqual({
      text: '## Goals\n- Migrate billing to Postgres 15',
      summarizer: 'openai:gpt-4o-mini',
      model: 'gpt-4o-mini-2024-07-18',
      usage: { inputTokens: 900, outputTokens: 12 },
    });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request!.path).toBe('/v1/chat/completions');
    const body = request!.body as ChatBody;
    expect(body).toMatchObject({
      model: 'gpt-4o-mini',
      seed: 42,
      temperature: 0,
      max_completion_tokens: 250,
    });
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(body.messages[1]!.content).toContain('[#1 user] Migrate the billing service to Postgres 15');
    expect(body.messages[1]!.content).toContain(INJECTION);
    expect(body.messages[0]!.content).not.toContain(INJECTION);
  });

  it('uses max_tokens when asked, and custom seed and temperature', async () => {
    const server = await startServer({ handler: [{ text: 'ok summary' }] });
    const summarizer = openaiSummarizer({
      model: 'local',
      apiKey: 'k',
      baseURL: server.openaiBaseURL,
      seed: 7,
      temperature: 0.2,
      maxTokensField: 'max_tokens',
    });
    await summarizer.summarize(sampleRequest());
    expect(server.requests[0]!.body).toMatchObject({ seed: 7, temperature: 0.2, max_tokens: 300 });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer k');
  });

  it('retries 429 and 500 exactly maxRetries times through the SDK', async () => {
    const started = await startServer({
      handler: [
        { error: { status: 429, message: 'rate limited' } },
        { error: { status: 500, message: 'boom' } },
        { text: 'recovered' },
      ],
    });
    const client = new OpenAI({ baseURL: started.openaiBaseURL, apiKey: 'sk-test' });
    const summarizer = openaiSummarizer({ model: 'gpt-4o-mini', client, maxRetries: 2 });
    expect((await summarizer.summarize(sampleRequest())).text).toBe('recovered');
    expect(started.requests).toHaveLength(3);
  });

  it('with maxRetries 0 a 429 fails once and the resilient wrapper throws summarizer_failed', async () => {
    const { server, summarizer } = await setup([{ error: { status: 429, message: 'rate limited' } }]);
    const reports: SummarizerErrorReport[] = [];
    const error = await resilientSummarizer(summarizer)
      .summarize(sampleRequest({ reportError: (r) => reports.push(r) }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'summarizer_failed', message: expect.stringContaining('HTTP 429') });
    expect(server.requests).toHaveLength(1);
    expect(reports).toEqual([]);
  });

  it('a refusal is retried once with the brief strategy, then succeeds', async () => {
    const { server, summarizer } = await setup([
      { refusal: 'I cannot help with that.' },
      { text: '- brief summary [#1]' },
    ]);
    const reports: SummarizerErrorReport[] = [];
    const result = await resilientSummarizer(summarizer).summarize(
      sampleRequest({ reportError: (r) => reports.push(r) }),
    );
    expect(result.text).toBe('- brief summary [#1]');
    expect(reports).toEqual([
      expect.objectContaining({ errorType: 'summarizer_refused', fallback: 'retry_brief' }),
    ]);
    const systems = server.requests.map((r) => (r.body as ChatBody).messages[0]!.content);
    expect(systems[0]).toContain('Strategy: task_state');
    expect(systems[1]).toContain('Strategy: brief');
  });

  it('content_filter twice ends in summarizer_refused', async () => {
    const { summarizer } = await setup([
      { text: 'x', finishReason: 'content_filter' },
      { text: 'x', finishReason: 'content_filter' },
    ]);
    const error = await resilientSummarizer(summarizer)
      .summarize(sampleRequest())
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'summarizer_refused' });
  });

  it('over-long summaries are retried with max tokens halved twice, then summary_too_long', async () => {
    const long = 'word '.repeat(400);
    const { server, summarizer } = await setup([
      { text: long },
      { text: long, finishReason: 'length' },
      { text: long },
    ]);
    const reports: SummarizerErrorReport[] = [];
    const error = await resilientSummarizer(summarizer)
      .summarize(sampleRequest({ maxTokens: 200, reportError: (r) => reports.push(r) }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'summary_too_long' });
    expect(server.requests.map((r) => (r.body as ChatBody).max_completion_tokens)).toEqual([200, 100, 50]);
    expect(reports.map((r) => [r.errorType, r.fallback])).toEqual([
      ['summary_too_long', 'retry_shorter'],
      ['summary_too_long', 'retry_shorter'],
    ]);
    expect((server.requests[2]!.body as ChatBody).messages[1]!.content).toContain('within 50 tokens');
  });

  it('malformed JSON from the server is a summarizer_failed error, never summary text', async () => {
    const { summarizer } = await setup([{ status: 200, body: '{"id": "chatcmpl-1", "choices": [' }]);
    const error = await resilientSummarizer(summarizer)
      .summarize(sampleRequest())
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'summarizer_failed' });
  });

  it('a response without choices or text is a failure', async () => {
    const { summarizer } = await setup([{ json: { id: 'x', object: 'chat.completion', choices: [] } }]);
    await expect(summarizer.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_failed' });
  });

  it('a response slower than the timeout is aborted: summarizer_timeout', async () => {
    const { server, summarizer } = await setup([{ hang: true }]);
    // The time limit expires once the request is on the wire (an outer limit, as the
    // manager's): a loaded machine may take longer than any fixed limit to send it.
    const limit = new AbortController();
    const pending = resilientSummarizer(summarizer, { timeoutMs: 600_000 })
      .summarize(sampleRequest({ signal: limit.signal }))
      .catch((e: unknown) => e);
    await until(() => server.requests.length === 1, 'the request at the server');
    limit.abort(new DOMException('the time limit expired', 'TimeoutError'));
    expect(await pending).toMatchObject({ code: 'summarizer_timeout' });
    expect(server.requests).toHaveLength(1);
  });

  it('an empty answer is a failure', async () => {
    const { summarizer } = await setup([{ text: '   ' }]);
    await expect(summarizer.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_failed' });
  });

  it('empty answers are rejected outputs (reason empty): they never open the circuit', async () => {
    const { server, client } = await setup(Array.from({ length: 20 }, () => ({ text: '   ' })));
    const summarizer = resilientSummarizer(openaiSummarizer({ model: 'gpt-4o-mini', client }), {
      circuitBreaker: { failureThreshold: 1, key: 'empty-answers' },
    });
    for (let i = 0; i < 3; i++)
      await expect(summarizer.summarize(sampleRequest())).rejects.toMatchObject({
        code: 'summarizer_failed',
        reason: 'empty',
      });
    expect(summarizer.circuit()).toEqual({ failures: 0, open: false });
    // Every call reached the provider: none was skipped by an open circuit.
    expect(server.requests.length).toBeGreaterThanOrEqual(3);
  });

  it('requires a model', () => {
    expect(() => openaiSummarizer({ model: '' })).toThrow(
      expect.objectContaining({ code: 'invalid_config' }),
    );
  });
});
