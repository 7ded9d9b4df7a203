import * as classes from '@langchain/core/messages';
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { tool } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { feedLangChainUsage, langChainOverflowOf, langChainToolSchemas } from './compaction-middleware.js';
import { chatToLangChain, LANGCHAIN_META_KEY, langChainToChat } from './index.js';

const IMAGE = { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' };

function thread(): BaseMessage[] {
  return [
    new SystemMessage('sys'),
    new HumanMessage({
      content: [{ type: 'text', text: 'look at this' }, IMAGE, { type: 'x-custom', payload: 1 }],
      additional_kwargs: { [LANGCHAIN_META_KEY]: { protected: true, label: 'brief' } },
    }),
    new AIMessage({
      content: [
        { type: 'reasoning', reasoning: 'thinking' },
        { type: 'text', text: 'calling' },
        { type: 'tool_use', id: 'a', name: 't', input: { x: 1 } },
      ],
      tool_calls: [
        { id: 'a', name: 't', args: { x: 1 }, type: 'tool_call' },
        { id: 'b', name: 't', args: { x: 2 }, type: 'tool_call' },
      ],
      id: 'ai-1',
    }),
    new ToolMessage({ content: 'A'.repeat(50), tool_call_id: 'a', name: 't', artifact: { full: true } }),
    new ToolMessage({ content: [{ type: 'text', text: 'B' }], tool_call_id: 'b', status: 'error' }),
  ];
}

describe('LangChain message conversion', () => {
  it('converts every kind and round-trips each message as the original object', () => {
    const messages = thread();
    const chat = langChainToChat(messages);
    expect(chat.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(chat[1]).toMatchObject({
      content: [
        { type: 'text', text: 'look at this' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        // Counted by its type name: the Chat format rejects part types it does not know.
        { type: 'text', text: '[x-custom]' },
      ],
      meta: { protected: true, label: 'brief' },
    });
    // Tool-use blocks are the calls themselves; reasoning is counted as text.
    expect(chat[2]).toMatchObject({
      content: 'thinking\ncalling',
      tool_calls: [{ id: 'a', function: { name: 't', arguments: '{"x":1}' } }, { id: 'b' }],
    });
    expect(chat[3]).toMatchObject({ tool_call_id: 'a', content: 'A'.repeat(50) });
    expect(chat[4]).toMatchObject({ tool_call_id: 'b', content: 'B' });
    // One conversion per message object: the manager's identity cache hits next time.
    expect(langChainToChat(messages)[2]).toBe(chat[2]);
    const back = chatToLangChain(chat, classes);
    back.forEach((message, k) => {
      expect(message).toBe(messages[k]);
    });
  });

  it('rebuilds rewritten messages in their class and writes the summary as a HumanMessage', () => {
    const messages = thread();
    const chat = langChainToChat(messages);
    const cleared = { ...chat[3], content: '[cleared: 50 chars]' };
    const shortened = {
      ...chat[2],
      tool_calls: [
        (chat[2]!.tool_calls as unknown[])[0],
        { id: 'b', type: 'function', function: { name: 't', arguments: '{"x":"2…"}' } },
      ],
    };
    const summary = { role: 'assistant', content: '<COMPACT-SUMMARY v1>\nS\n</COMPACT-SUMMARY>' };
    const back = chatToLangChain([chat[0], summary, shortened, cleared, chat[4]], classes);
    expect(back[0]).toBe(messages[0]);
    expect(HumanMessage.isInstance(back[1])).toBe(true);
    expect(back[1]!.content).toBe(summary.content);
    const ai = back[2] as AIMessage;
    expect(AIMessage.isInstance(ai) && ai !== messages[2]).toBe(true);
    expect(ai.id).toBe('ai-1');
    expect(ai.tool_calls).toEqual([
      { id: 'a', name: 't', args: { x: 1 }, type: 'tool_call' },
      { id: 'b', name: 't', args: { x: '2…' }, type: 'tool_call' },
    ]);
    expect(ai.content).toBe(messages[2]!.content);
    const tool = back[3] as ToolMessage;
    expect(ToolMessage.isInstance(tool)).toBe(true);
    expect(tool).toMatchObject({ content: '[cleared: 50 chars]', tool_call_id: 'a', name: 't' });
    expect(tool.artifact).toBeUndefined();
    expect(back[4]).toBe(messages[4]);
    // The caller's messages are never touched.
    expect((messages[3] as ToolMessage).content).toBe('A'.repeat(50));
  });

  it('keeps a protected message through a compaction', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 4000 });
    const long = Array.from({ length: 30 }, (_, k) => [
      new HumanMessage(`question ${k} ${'lorem ipsum '.repeat(40)}`),
      new AIMessage(`answer ${k} ${'dolor sit '.repeat(40)}`),
    ]).flat();
    const messages = [...thread(), ...long];
    const result = await manager.compact('protect', langChainToChat(messages), { format: 'openai-chat' });
    expect(result.applied).toBe(true);
    const back = chatToLangChain(result.messages, classes);
    expect(back).toContain(messages[1]);
    expect(back).toContain(messages[0]);
    expect(back.length).toBeLessThan(messages.length);
  });
});

describe('LangChain tools, usage and errors', () => {
  it('counts tools as OpenAI function schemas', async () => {
    const probe = tool(async () => 'ok', {
      name: 'probe',
      description: 'Probe a host',
      schema: z.object({ host: z.string() }),
    });
    const [schema, provider] = await langChainToolSchemas([probe, { type: 'web_search_preview' }]);
    expect(schema).toMatchObject({
      type: 'function',
      function: { name: 'probe', description: 'Probe a host', parameters: { properties: { host: {} } } },
    });
    expect(provider).toEqual({ type: 'web_search_preview' });
    const manager = new CompactManager({ model: 'gpt-4o' });
    expect(manager.estimate([], { tools: [schema] }).total).toBeGreaterThan(10);
  });

  it('feeds usage_metadata with cache reads and writes', () => {
    const manager = new CompactManager({ model: 'claude-sonnet-4-6' });
    // LangChain's input_tokens holds the cache reads and writes (for Anthropic as for OpenAI).
    feedLangChainUsage(manager, 'u', {
      input_tokens: 10_000,
      output_tokens: 40,
      input_token_details: { cache_read: 8_000, cache_creation: 1_500 },
    });
    feedLangChainUsage(manager, 'u', { output_tokens: 3 });
    expect(manager.costSnapshot('u')).toMatchObject({
      requests: 1,
      cacheReadTokens: 8_000,
      cacheWriteTokens: 1_500,
      outputTokens: 40,
    });
  });

  it('finds a rejection for length along the cause chain', () => {
    const api = Object.assign(new Error('400 maximum context length is 4000 tokens'), {
      status: 400,
      error: { code: 'context_length_exceeded' },
    });
    const wrapped = Object.assign(new Error('model failed'), {
      name: 'MiddlewareError',
      cause: Object.assign(new Error(api.message), { name: 'ContextOverflowError', cause: api }),
    });
    expect(langChainOverflowOf(wrapped)).toMatchObject({ status: 400, limit: 4000 });
    expect(
      langChainOverflowOf(Object.assign(new Error('too big'), { name: 'ContextOverflowError' })),
    ).toEqual({
      message: 'too big',
    });
    expect(langChainOverflowOf(new Error('rate limited'))).toBeUndefined();
  });
});
