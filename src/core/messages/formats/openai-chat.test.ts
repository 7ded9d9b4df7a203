import { describe, expect, it } from 'vitest';
import { openaiChatCodec } from './openai-chat.js';

describe('openaiChatCodec.parse', () => {
  it('gives the same parse as before it built each shape in one literal', () => {
    const plain = { role: 'user', content: 'hello' };
    const call = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'read', arguments: '{}' } }],
    };
    const result = { role: 'tool', tool_call_id: 'call_0', content: 'file text' };
    const base = { kind: 'message', format: 'openai-chat' };
    expect(openaiChatCodec.parse(plain, 0)).toStrictEqual({
      ...base,
      role: 'user',
      text: 'hello',
      toolCalls: [],
      toolResults: [],
      raw: plain,
    });
    expect(openaiChatCodec.parse(call, 1)).toStrictEqual({
      ...base,
      role: 'assistant',
      text: '',
      toolCalls: [{ id: 'call_0', name: 'read', arguments: '{}' }],
      toolResults: [],
      raw: call,
      explicitId: 'call:call_0',
    });
    expect(openaiChatCodec.parse(result, 2)).toStrictEqual({
      ...base,
      role: 'tool',
      text: '',
      toolCalls: [],
      toolResults: [{ callId: 'call_0', output: 'file text' }],
      raw: result,
      explicitId: 'result:call_0',
    });
    expect(openaiChatCodec.parse({ ...plain, meta: { id: 'mine' } }, 3).explicitId).toBe('mine');
  });
});
