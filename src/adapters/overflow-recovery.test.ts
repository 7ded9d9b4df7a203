import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { generateText } from 'ai';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ProviderReply,
  type ProviderTestServer,
  startProviderTestServer,
} from '../testing/provider-test-server.js';
import { contextOverflowOf, recoveryWindow, UNKNOWN_LIMIT_FACTOR } from './overflow-recovery.js';

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const openaiTooLong: ProviderReply = {
  status: 400,
  json: {
    error: {
      message:
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130,512 tokens. Please reduce the length of the messages.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  },
};
const responsesTooLong: ProviderReply = {
  status: 400,
  json: {
    error: {
      message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
      type: 'invalid_request_error',
      param: 'input',
      code: 'context_length_exceeded',
    },
  },
};
const anthropicTooLong: ProviderReply = {
  error: {
    status: 400,
    message: 'prompt is too long: 208310 tokens > 200000 maximum',
    type: 'invalid_request_error',
  },
};
const tooLarge: ProviderReply = {
  error: { status: 413, message: 'Request exceeds the maximum size', type: 'request_too_large' },
};

/** The error a real SDK throws for `reply`. */
async function thrownBy(reply: ProviderReply, sdk: 'openai' | 'anthropic' | 'ai-sdk'): Promise<unknown> {
  await server?.close();
  server = await startProviderTestServer({ handler: () => reply });
  try {
    if (sdk === 'openai') {
      const client = new OpenAI({ apiKey: 'k', baseURL: server.openaiBaseURL, maxRetries: 0 });
      await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    } else if (sdk === 'anthropic') {
      const client = new Anthropic({ apiKey: 'k', baseURL: server.anthropicBaseURL, maxRetries: 0 });
      await client.messages.create({
        model: 'm',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'hi' }],
      });
    } else {
      const provider = createOpenAI({ apiKey: 'k', baseURL: server.openaiBaseURL });
      await generateText({ model: provider.chat('gpt-4o'), prompt: 'hi', maxRetries: 0 });
    }
  } catch (error) {
    return error;
  }
  throw new Error('the call did not fail');
}

describe('contextOverflowOf, on the errors the real SDKs throw', () => {
  it('reads OpenAI context_length_exceeded with its limit and size, through openai and the AI SDK', async () => {
    for (const sdk of ['openai', 'ai-sdk'] as const) {
      expect(contextOverflowOf(await thrownBy(openaiTooLong, sdk))).toMatchObject({
        status: 400,
        limit: 128_000,
        tokens: 130_512,
      });
    }
    const bare = contextOverflowOf(await thrownBy(responsesTooLong, 'openai'));
    expect(bare).toMatchObject({ status: 400 });
    expect(bare?.limit).toBeUndefined();
  });

  it('reads Anthropic "prompt is too long" and an HTTP 413', async () => {
    expect(contextOverflowOf(await thrownBy(anthropicTooLong, 'anthropic'))).toMatchObject({
      status: 400,
      limit: 200_000,
      tokens: 208_310,
    });
    expect(contextOverflowOf(await thrownBy(tooLarge, 'anthropic'))).toMatchObject({ status: 413 });
    expect(contextOverflowOf(await thrownBy(tooLarge, 'ai-sdk'))).toMatchObject({ status: 413 });
  });

  it('leaves every other error alone', async () => {
    const others: ProviderReply[] = [
      { error: { status: 400, message: 'Invalid schema for function probe' } },
      { error: { status: 429, message: 'Rate limit reached: too many tokens per minute' } },
      { error: { status: 500, message: 'context window service unavailable' } },
      { error: { status: 401, message: 'invalid x-api-key' } },
    ];
    for (const reply of others) {
      for (const sdk of ['openai', 'anthropic', 'ai-sdk'] as const) {
        expect(contextOverflowOf(await thrownBy(reply, sdk))).toBeUndefined();
      }
    }
    expect(contextOverflowOf(new Error('prompt is too long'))).toMatchObject({
      message: 'prompt is too long',
    });
    expect(contextOverflowOf('prompt is too long')).toBeUndefined();
    expect(contextOverflowOf(null)).toBeUndefined();
  });
});

describe('recoveryWindow', () => {
  it('maps the reported limit onto the manager count, else takes a tighter share of what was sent', () => {
    // The provider counted 10% more than the manager: the limit shrinks by as much, then 5%.
    expect(recoveryWindow({ message: '', limit: 8000, tokens: 8800 }, 8000, 8000)).toBe(
      Math.floor(((8000 * 8000) / 8800) * 0.95),
    );
    expect(recoveryWindow({ message: '', limit: 6000 }, 7000, 8000)).toBe(Math.floor(6000 * 0.95));
    expect(recoveryWindow({ message: '' }, 7000, 8000)).toBe(Math.floor(7000 * UNKNOWN_LIMIT_FACTOR));
    // Never above the manager's own window.
    expect(recoveryWindow({ message: '', limit: 200_000, tokens: 100 }, 100, 8000)).toBe(8000);
  });
});
