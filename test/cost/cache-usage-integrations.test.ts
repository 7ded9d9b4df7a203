import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { Agent, MemorySession, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { generateText, streamText, wrapLanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { compactionMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { withCompaction } from '../../src/adapters/anthropic/index.js';
import { CompactionModelProvider, CompactionSession } from '../../src/adapters/openai-agents/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';

/**
 * Issue 21, "cache usage in": each integration passes the provider's cache figures, read from
 * the provider's own wire format (a loopback server speaking it, the real SDK on top), to the
 * manager, streamed and not. The server reports 10,000 input tokens of which 8,000 were read
 * from the cache and 1,500 written to it, and 40 output tokens, per request.
 */

const USAGE = { inputTokens: 10_000, outputTokens: 40, cacheReadTokens: 8_000, cacheWriteTokens: 1_500 };

setTracingDisabled(true);
let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start() {
  server = await startProviderTestServer({ handler: () => ({ text: 'ok', usage: USAGE }) });
  return server;
}

describe('cache figures from each integration reach costSnapshot', () => {
  it('Anthropic messages.create, plain and streamed: reads, writes and uncached input apart', async () => {
    const { anthropicBaseURL } = await start();
    const manager = new CompactManager({ model: 'claude-sonnet-4-6' });
    const client = withCompaction(
      new Anthropic({ apiKey: 'k', baseURL: anthropicBaseURL, maxRetries: 0 }),
      manager,
      {
        sessionId: 'a',
      },
    );
    const params = {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [{ role: 'user' as const, content: 'hi' }],
    };
    await client.messages.create(params);
    for await (const _event of await client.messages.create({ ...params, stream: true })) {
      // drained
    }
    const cost = manager.costSnapshot('a')!;
    expect(cost).toMatchObject({
      requests: 2,
      inputTokens: 20_000,
      cacheReadTokens: 16_000,
      cacheWriteTokens: 3_000,
      uncachedTokens: 1_000,
      outputTokens: 80,
    });
    // 500 + 8,000 x 0.1 + 1,500 x 1.25 + 40 x 5, per request.
    expect(cost.billedInputEquivalent).toBeCloseTo(2 * (500 + 800 + 1_875 + 200), 6);
    await manager.shutdown();
  });

  it('AI SDK middleware over OpenAI Chat, generate and stream: cached tokens inside the input', async () => {
    const { openaiBaseURL } = await start();
    const manager = new CompactManager({ model: 'gpt-4o' });
    const provider = createOpenAI({ baseURL: openaiBaseURL, apiKey: 'test-key' });
    const model = wrapLanguageModel({
      model: provider.chat('gpt-4o'),
      middleware: compactionMiddleware(manager, { sessionId: 'ai' }),
    });
    await generateText({ model, prompt: 'hi' });
    const streamed = streamText({ model, prompt: 'hi again' });
    await streamed.consumeStream();
    const cost = manager.costSnapshot('ai')!;
    expect(cost.requests).toBe(2);
    // OpenAI reports no cache writes: 10,000 input of which 8,000 cached, per request.
    expect(cost).toMatchObject({
      inputTokens: 20_000,
      cacheReadTokens: 16_000,
      uncachedTokens: 4_000,
      outputTokens: 80,
    });
    expect(cost.hitShare).toBeCloseTo(0.8, 9);
    await manager.shutdown();
  });

  it('Agents SDK over Responses, run and streamed run: input_tokens_details.cached_tokens', async () => {
    const { openaiBaseURL } = await start();
    const manager = new CompactManager({ model: 'gpt-4o' });
    const runner = new Runner({
      modelProvider: new CompactionModelProvider(new OpenAIProvider({ apiKey: 'k', baseURL: openaiBaseURL })),
    });
    const agent = new Agent({ name: 'a', instructions: 'Answer.', model: 'gpt-4o' });
    const session = new CompactionSession({ session: new MemorySession(), manager, sessionId: 'agents' });
    await runner.run(agent, 'hi', session.runOptions());
    const streamed = await runner.run(agent, 'again', { ...session.runOptions(), stream: true });
    await streamed.completed;
    const cost = manager.costSnapshot('agents')!;
    expect(cost.requests).toBe(2);
    expect(cost).toMatchObject({
      inputTokens: 20_000,
      cacheReadTokens: 16_000,
      uncachedTokens: 4_000,
      outputTokens: 80,
    });
    await manager.shutdown();
  });
});
