import { describe, expect, it } from 'vitest';
import { isCompactError } from '../../errors.js';
import { anthropicCodec } from './anthropic.js';
import { detectFormat, MESSAGE_CODECS } from './detect-format.js';
import { openaiChatCodec } from './openai-chat.js';
import { openaiResponsesCodec } from './openai-responses.js';

const chat = [
  { role: 'system', content: 'You are helpful.' },
  { role: 'developer', content: 'Policy', meta: { protected: true, label: 'Policy' } },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: 'data:x' } },
    ],
    name: 'ann',
  },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'read', arguments: '{"p":1}' } },
      { id: 'c2', type: 'function', function: { name: 'grep', arguments: '{}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'one' },
  { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'two' }] },
  { role: 'assistant', content: 'done', refusal: null },
];

const responses = [
  { type: 'message', role: 'system', content: 'sys' },
  { role: 'user', content: 'easy input message' },
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
  {
    type: 'reasoning',
    id: 'rs_1',
    summary: [{ type: 'summary_text', text: 'thinking' }],
    encrypted_content: 'abc',
  },
  { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read', arguments: '{}' },
  { type: 'function_call_output', call_id: 'call_1', output: 'file body' },
  { type: 'function_call', callId: 'call_2', name: 'grep', arguments: '{}', status: 'completed' },
  {
    type: 'function_call_result',
    callId: 'call_2',
    name: 'grep',
    status: 'completed',
    output: { type: 'text', text: 'match' },
  },
  { type: 'computer_call', call_id: 'cc_1', action: { type: 'click' } },
  { type: 'computer_call_output', call_id: 'cc_1', output: { type: 'computer_screenshot' } },
  { type: 'web_search_call', id: 'ws_1', status: 'completed' },
  { type: 'item_reference', id: 'msg_9' },
  {
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'answer' }],
    meta: { label: 'x' },
  },
];

const anthropic = [
  { role: 'user', content: 'hello' },
  {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'hmm', signature: 's' },
      { type: 'text', text: 'calling' },
      { type: 'tool_use', id: 'tu_1', name: 'read', input: { p: 1 } },
      { type: 'tool_use', id: 'tu_2', name: 'grep', input: {} },
    ],
  },
  {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'tu_1', content: 'one' },
      { type: 'tool_result', tool_use_id: 'tu_2', content: [{ type: 'text', text: 'two' }], is_error: true },
      { type: 'text', text: 'and more' },
    ],
  },
  {
    role: 'assistant',
    content: [
      { type: 'server_tool_use', id: 'st_1', name: 'web_search', input: { q: 'x' } },
      { type: 'web_search_tool_result', tool_use_id: 'st_1', content: [] },
    ],
  },
];

describe('detectFormat', () => {
  it('detects each format from the first telling item', () => {
    expect(detectFormat(chat)).toBe('openai-chat');
    expect(detectFormat(responses)).toBe('openai-responses');
    expect(detectFormat(anthropic)).toBe('anthropic');
    expect(detectFormat([{ role: 'user', content: 'plain' }])).toBe('openai-chat');
    expect(detectFormat([])).toBe('openai-chat');
    expect(detectFormat([{ role: 'user', content: [{ type: 'input_text', text: 'x' }] }])).toBe(
      'openai-responses',
    );
    expect(detectFormat([{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }])).toBe(
      'openai-chat',
    );
  });

  it('rejects a non-array', () => {
    expect(() => detectFormat('nope' as never)).toThrow(/messages must be an array/);
  });

  it('reads a plain history that grows by appending only where it grew (issue 47)', () => {
    let reads = 0;
    const plain = (i: number) =>
      new Proxy(
        { role: i % 2 === 0 ? 'user' : 'assistant', content: `plain ${i}` } as Record<string, unknown>,
        {
          get(target, key) {
            reads++;
            return target[key as string];
          },
        },
      );
    const history = Array.from({ length: 5_000 }, (_, i) => plain(i));
    expect(detectFormat(history)).toBe('openai-chat');
    history.push(plain(5_000));
    reads = 0;
    expect(detectFormat(history)).toBe('openai-chat');
    // The new message alone (a handful of fields), not 5,001 messages.
    expect(reads).toBeLessThan(20);
    // An appended item that tells is found, and the plain prefix is still skipped.
    history.push(new Proxy({ type: 'message', role: 'user', content: 'x' }, {}) as Record<string, unknown>);
    reads = 0;
    expect(detectFormat(history)).toBe('openai-responses');
    expect(reads).toBeLessThan(20);
    // Another array (a copy), or the same one rewound and grown with other objects: read whole.
    reads = 0;
    expect(detectFormat(history.slice(0, 5_001))).toBe('openai-chat');
    expect(reads).toBeGreaterThan(5_000);
    history.length = 4_000;
    history.push(...Array.from({ length: 1_500 }, (_, i) => plain(9_000 + i)));
    history[4_999] = { role: 'tool', tool_call_id: 'c1', content: 'done' };
    reads = 0;
    expect(detectFormat(history)).toBe('openai-chat');
    expect(reads).toBeGreaterThan(4_000);
  });
});

describe.each([
  ['openai-chat', chat],
  ['openai-responses', responses],
  ['anthropic', anthropic],
] as const)('%s codec', (format, messages) => {
  const codec = MESSAGE_CODECS[format];

  it('round-trips losslessly (meta stripped, objects untouched)', () => {
    const before = structuredClone(messages);
    const out = messages.map((raw, index) => codec.toWire({ ...codec.parse(raw, index), id: '', index }));
    const expected = messages.map((m) => {
      const { meta: _meta, ...rest } = m as Record<string, unknown>;
      return rest;
    });
    expect(out).toEqual(expected);
    expect(messages).toEqual(before);
    for (const item of out) expect(item).not.toHaveProperty('meta');
  });

  it('writes a summary message it can read back', () => {
    const wire = codec.summaryMessage('<COMPACT-SUMMARY v2>\nbody\n</COMPACT-SUMMARY>');
    const parsed = codec.parse(wire, 0);
    expect(parsed.text).toContain('<COMPACT-SUMMARY v2>');
    expect(parsed.kind).toBe('message');
    expect(parsed.toolCalls).toEqual([]);
  });
});

describe('parsing details', () => {
  it('reads chat tool calls and results', () => {
    const call = openaiChatCodec.parse(chat[3], 3);
    expect(call.toolCalls.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(call.explicitId).toBe('call:c1');
    const result = openaiChatCodec.parse(chat[5], 5);
    expect(result.toolResults).toEqual([{ callId: 'c2', output: 'two' }]);
    expect(openaiChatCodec.parse(chat[1], 1).meta).toEqual({ protected: true, label: 'Policy' });
    expect(openaiChatCodec.parse(chat[2], 2).text).toBe('look\n[image_url]');
    expect(openaiChatCodec.parse({ role: 'user', content: 'x', meta: { id: 'mine' } }, 0).explicitId).toBe(
      'mine',
    );
    expect(openaiChatCodec.parse({ role: 'function', name: 'f', content: 'r' }, 0).toolResults).toEqual([
      { callId: 'f', output: 'r' },
    ]);
  });

  it('reads Responses and Agents SDK items', () => {
    const parsed = responses.map((item, i) => openaiResponsesCodec.parse(item, i));
    expect(parsed[3]!.kind).toBe('reasoning');
    expect(parsed[3]!.text).toBe('thinking');
    expect(parsed[4]!.toolCalls).toEqual([{ id: 'call_1', name: 'read', arguments: '{}' }]);
    expect(parsed[5]!.toolResults).toEqual([{ callId: 'call_1', output: 'file body' }]);
    expect(parsed[6]!.toolCalls[0]!.id).toBe('call_2');
    expect(parsed[7]!.toolResults).toEqual([{ callId: 'call_2', output: 'match' }]);
    expect(parsed[8]!.toolCalls[0]).toMatchObject({ id: 'cc_1', name: 'computer' });
    expect(parsed[9]!.toolResults[0]!.callId).toBe('cc_1');
    expect(parsed[10]).toMatchObject({ kind: 'other', itemType: 'web_search_call', explicitId: 'item:ws_1' });
    expect(parsed[11]!.kind).toBe('other');
    expect(parsed[12]!.text).toBe('answer');
  });

  it('reads Anthropic blocks', () => {
    const assistant = anthropicCodec.parse(anthropic[1], 1);
    expect(assistant.toolCalls.map((c) => c.id)).toEqual(['tu_1', 'tu_2']);
    expect(assistant.text).toBe('hmm\ncalling');
    const results = anthropicCodec.parse(anthropic[2], 2);
    expect(results.toolResults).toEqual([
      { callId: 'tu_1', output: 'one' },
      { callId: 'tu_2', output: 'two', isError: true },
    ]);
    // Server tool blocks are the assistant turn's own (Anthropic runs them): neither calls nor results.
    const server = anthropicCodec.parse(anthropic[3], 3);
    expect(server.toolCalls).toEqual([]);
    expect(server.toolResults).toEqual([]);
    expect(server.text).toBe('[server_tool_use]\nweb_search {"q":"x"}\n[web_search_tool_result]\n');
  });

  it('converts across formats', () => {
    const call = openaiChatCodec.parse(chat[3], 3);
    const asAnthropic = anthropicCodec.toWire({ ...call, id: '', index: 0 }) as {
      role: string;
      content: { type: string; input?: unknown }[];
    };
    expect(asAnthropic.role).toBe('assistant');
    expect(asAnthropic.content.filter((b) => b.type === 'tool_use')).toHaveLength(2);
    expect(asAnthropic.content[0]!.input).toEqual({ p: 1 });
    const result = anthropicCodec.parse(anthropic[2], 2);
    expect(openaiChatCodec.toWire({ ...result, id: '', index: 0 })).toEqual({
      role: 'tool',
      tool_call_id: 'tu_1',
      content: 'one',
    });
    expect(openaiResponsesCodec.toWire({ ...result, id: '', index: 0 })).toEqual({
      type: 'function_call_output',
      call_id: 'tu_1',
      output: 'one',
    });
    expect(openaiResponsesCodec.toWire({ ...call, id: '', index: 0 })).toMatchObject({
      type: 'function_call',
      call_id: 'c1',
    });
    const text = openaiChatCodec.parse(chat[0], 0);
    expect(openaiResponsesCodec.toWire({ ...text, id: '', index: 0 })).toEqual({
      type: 'message',
      role: 'system',
      content: 'You are helpful.',
    });
    expect(openaiChatCodec.toWire({ ...anthropicCodec.parse(anthropic[0], 0), id: '', index: 0 })).toEqual({
      role: 'user',
      content: 'hello',
    });
  });
});

describe('validation errors name the index and field', () => {
  const cases: [string, (typeof MESSAGE_CODECS)[keyof typeof MESSAGE_CODECS], unknown, RegExp][] = [
    ['missing role', openaiChatCodec, { content: 'x' }, /messages\[4\]\.role: is missing/],
    ['unknown role', openaiChatCodec, { role: 'robot', content: 'x' }, /messages\[4\]\.role: "robot"/],
    ['non-object', openaiChatCodec, 'hello', /messages\[4\]: must be an object/],
    ['non-string content', openaiChatCodec, { role: 'user', content: 42 }, /messages\[4\]\.content/],
    ['missing user content', openaiChatCodec, { role: 'user' }, /messages\[4\]\.content: is required/],
    ['tool without id', openaiChatCodec, { role: 'tool', content: 'x' }, /messages\[4\]\.tool_call_id/],
    [
      'bad tool call',
      openaiChatCodec,
      { role: 'assistant', content: null, tool_calls: [{ function: { name: 'x' } }] },
      /messages\[4\]\.tool_calls\.0\.id/,
    ],
    [
      'tool_calls not array',
      openaiChatCodec,
      { role: 'assistant', content: null, tool_calls: {} },
      /messages\[4\]\.tool_calls: must be an array/,
    ],
    [
      'responses role',
      openaiResponsesCodec,
      { type: 'message', role: 'tool', content: 'x' },
      /messages\[4\]\.role/,
    ],
    [
      'responses content',
      openaiResponsesCodec,
      { type: 'message', role: 'user', content: 5 },
      /messages\[4\]\.content/,
    ],
    [
      'responses call id',
      openaiResponsesCodec,
      { type: 'function_call_output', output: 'x' },
      /messages\[4\]\.call_id/,
    ],
    [
      'responses call name',
      openaiResponsesCodec,
      { type: 'function_call', call_id: 'c', arguments: '{}' },
      /messages\[4\]\.name/,
    ],
    ['responses type', openaiResponsesCodec, { type: 7 }, /messages\[4\]\.type/],
    ['anthropic role', anthropicCodec, { role: 'tool', content: 'x' }, /messages\[4\]\.role/],
    [
      'anthropic block',
      anthropicCodec,
      { role: 'user', content: [{ type: 'tool_result' }] },
      /messages\[4\]\.content\.0\.tool_use_id/,
    ],
    [
      'anthropic tool_use id',
      anthropicCodec,
      { role: 'assistant', content: [{ type: 'tool_use', name: 'x' }] },
      /messages\[4\]\.content\.0\.id/,
    ],
    [
      'anthropic text',
      anthropicCodec,
      { role: 'user', content: [{ type: 'text' }] },
      /messages\[4\]\.content\.0\.text/,
    ],
    ['anthropic content', anthropicCodec, { role: 'user', content: 3 }, /messages\[4\]\.content/],
  ];
  it.each(cases)('%s', (_name, codec, raw, pattern) => {
    let caught: unknown;
    try {
      codec.parse(raw, 4);
    } catch (error) {
      caught = error;
    }
    expect(isCompactError(caught, 'invalid_messages')).toBe(true);
    expect((caught as Error).message).toMatch(pattern);
    expect((caught as { issues: { path: unknown[] }[] }).issues[0]!.path.slice(0, 2)).toEqual([
      'messages',
      4,
    ]);
  });
});
