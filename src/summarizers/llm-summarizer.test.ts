import { readFileSync, writeFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { sampleMessages, sampleRequest } from '../../test/fixtures/summarizers/sample-session.js';
import { startProviderTestServer } from '../testing/provider-test-server.js';
import { anthropicSummarizer } from './anthropic/anthropic-summarizer.js';
import { type CompletionRequest, createLlmSummarizer } from './llm-summarizer.js';
import { openaiSummarizer } from './openai/openai-summarizer.js';
import { estimateTokens } from './render-transcript.js';

const FIXTURES = new URL('../../test/fixtures/summarizers/', import.meta.url);
const recorded = JSON.parse(readFileSync(new URL('recorded-responses.json', FIXTURES), 'utf8')) as Record<
  string,
  unknown
>;

function golden(name: string, actual: string): void {
  const file = new URL(`golden/${name}`, FIXTURES);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, actual);
  expect(actual).toBe(readFileSync(file, 'utf8'));
}

describe('golden: seed 42, temperature 0, recorded responses', () => {
  it('openai: byte-identical request bodies across runs (golden file) and identical summaries', async () => {
    const server = await startProviderTestServer({ handler: () => ({ json: recorded['openai-chat'] }) });
    try {
      const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 });
      const summaries: string[] = [];
      for (let run = 0; run < 2; run++) {
        const summarizer = openaiSummarizer({ model: 'gpt-4o-mini', client, seed: 42, temperature: 0 });
        summaries.push((await summarizer.summarize(sampleRequest())).text);
      }
      expect(server.requests[1]!.rawBody).toBe(server.requests[0]!.rawBody);
      golden('openai-request-task_state.json', `${JSON.stringify(server.requests[0]!.body, null, 2)}\n`);
      expect(summaries[1]).toBe(summaries[0]);
      const expected = (recorded['openai-chat'] as { choices: { message: { content: string } }[] })
        .choices[0]!.message.content;
      expect(summaries[0]).toBe(expected);
    } finally {
      await server.close();
    }
  });

  it('anthropic: byte-identical request bodies across runs (golden file) and identical summaries', async () => {
    const server = await startProviderTestServer({
      handler: () => ({ json: recorded['anthropic-messages'] }),
    });
    try {
      const client = new Anthropic({
        baseURL: server.anthropicBaseURL,
        apiKey: 'sk-ant-test',
        maxRetries: 0,
      });
      const summaries: string[] = [];
      for (let run = 0; run < 2; run++) {
        const summarizer = anthropicSummarizer({ model: 'claude-haiku-4-5', client, temperature: 0 });
        summaries.push((await summarizer.summarize(sampleRequest({ strategy: 'brief' }))).text);
      }
      expect(server.requests[1]!.rawBody).toBe(server.requests[0]!.rawBody);
      golden('anthropic-request-brief.json', `${JSON.stringify(server.requests[0]!.body, null, 2)}\n`);
      expect(summaries).toEqual([summaries[0], summaries[0]]);
      expect(summaries[0]).toContain('Never drop the invoices table [#1]');
    } finally {
      await server.close();
    }
  });
});

describe('createLlmSummarizer map-reduce', () => {
  function recordingModel() {
    const calls: CompletionRequest[] = [];
    const complete = async (request: CompletionRequest) => {
      calls.push(request);
      const part = calls.length;
      return { text: `summary ${part}`, model: 'fake', usage: { inputTokens: 10, outputTokens: 2 } };
    };
    return { calls, complete };
  }

  it('calls once when the history fits the context', async () => {
    const { calls, complete } = recordingModel();
    const result = await createLlmSummarizer('fake', complete, { contextTokens: 100_000 }).summarize(
      sampleRequest(),
    );
    expect(calls).toHaveLength(1);
    expect(result).toEqual({
      text: 'summary 1',
      summarizer: 'fake',
      model: 'fake',
      usage: { inputTokens: 10, outputTokens: 2 },
    });
  });

  it('summarizes chunks then merges them with the previous summary when the history exceeds the context', async () => {
    const { calls, complete } = recordingModel();
    const messages = Array.from({ length: 12 }, (_, i) => ({
      ...sampleMessages()[0]!,
      id: `m${i}`,
      index: i,
      text: `fact F-${i} ${'detail '.repeat(60)}`,
    }));
    const summarizer = createLlmSummarizer('fake', complete, { contextTokens: 1_800 });
    const result = await summarizer.summarize(
      sampleRequest({ messages, maxTokens: 100, previousSummary: 'PREVIOUS FACT P-1' }),
    );
    expect(calls.length).toBeGreaterThan(2);
    const partials = calls.slice(0, -1);
    for (const call of partials) {
      expect(call.user).not.toContain('PREVIOUS FACT P-1');
      expect(estimateTokens(call.system) + estimateTokens(call.user) + 100).toBeLessThanOrEqual(1_800);
    }
    // Every message went into exactly one partial, in order.
    const seen = partials.flatMap((call) => [...call.user.matchAll(/fact (F-\d+)/g)].map((m) => m[1]));
    expect(seen).toEqual(messages.map((_, i) => `F-${i}`));
    const merge = calls.at(-1)!;
    expect(merge.user).toContain('PREVIOUS FACT P-1');
    expect(merge.user).toContain(`[part 1 of ${partials.length}`);
    expect(result.text).toBe(`summary ${calls.length}`);
    expect(result.usage).toEqual({ inputTokens: 10 * calls.length, outputTokens: 2 * calls.length });
  });

  it('refuses a context too small to chunk and merge', async () => {
    const { complete } = recordingModel();
    const summarizer = createLlmSummarizer('fake', complete, { contextTokens: 1_000 });
    await expect(summarizer.summarize(sampleRequest({ maxTokens: 300 }))).rejects.toMatchObject({
      code: 'summarizer_failed',
    });
  });

  it('reduces in several rounds when the partial summaries do not fit at once', async () => {
    const calls: CompletionRequest[] = [];
    const complete = async (request: CompletionRequest) => {
      calls.push(request);
      return { text: `partial ${calls.length} ${'word '.repeat(70)}` };
    };
    const messages = Array.from({ length: 30 }, (_, i) => ({
      ...sampleMessages()[0]!,
      id: `m${i}`,
      index: i,
      text: 'detail '.repeat(150),
    }));
    const result = await createLlmSummarizer('fake', complete, { contextTokens: 1_900 }).summarize(
      sampleRequest({ messages, maxTokens: 100 }),
    );
    expect(result.text).toMatch(/^partial \d+/);
    expect(result).not.toHaveProperty('usage');
    expect(calls.some((call) => call.user.includes('[part 1 of'))).toBe(true);
    expect(calls.filter((call) => call.user.includes('[part 1 of')).length).toBeGreaterThan(1);
  });
});

describe('createLlmSummarizer output check', () => {
  it('throws summarizer_refused on a plain-text refusal, also for a map-reduce partial', async () => {
    const refusing = createLlmSummarizer('refuser', async () => ({
      text: "I'm sorry, but I can't help with that.",
    }));
    await expect(refusing.summarize(sampleRequest())).rejects.toMatchObject({
      code: 'summarizer_refused',
      reason: 'refusal',
    });
    let calls = 0;
    const chunked = createLlmSummarizer(
      'chunked',
      async () => {
        calls++;
        return { text: calls === 2 ? 'I apologize, but I cannot summarize this part.' : `- part ${calls}` };
      },
      { contextTokens: 1_800 },
    );
    const messages = Array.from({ length: 30 }, (_, i) => ({
      ...sampleMessages()[0]!,
      id: `m${i}`,
      index: i,
      text: `fact F-${i} ${'detail '.repeat(60)}`,
    }));
    await expect(chunked.summarize(sampleRequest({ messages, maxTokens: 100 }))).rejects.toMatchObject({
      code: 'summarizer_refused',
    });
    expect(calls).toBe(2);
  });
});
