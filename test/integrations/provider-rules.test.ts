/**
 * The provider rules of test/support/provider-rules.ts catch what each API refuses (each case a
 * request the provider answers with a 400), and pass what it takes: the judge of the world suite
 * and of the sound-requests ledger is itself checked.
 */
import { describe, expect, it } from 'vitest';
import { anthropicProblems, chatProblems, responsesProblems } from '../support/provider-rules.js';

const call = (id: string) => ({ id, type: 'function', function: { name: 'probe', arguments: '{}' } });
const use = (id: string) => ({ type: 'tool_use', id, name: 'probe', input: {} });
const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });

describe('OpenAI Chat rules', () => {
  it('takes parallel calls answered out of order, and reused ids across rounds', () => {
    const body = {
      messages: [
        { role: 'system', content: 'rules' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'go' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
        { role: 'tool', tool_call_id: 'b', content: 'ok' },
        { role: 'tool', tool_call_id: 'a', content: [{ type: 'text', text: 'ok' }] },
        { role: 'assistant', content: '', tool_calls: [call('a')] },
        { role: 'tool', tool_call_id: 'a', content: 'ok' },
      ],
    };
    expect(chatProblems(body)).toEqual([]);
  });

  it.each([
    [
      'an unanswered call',
      [
        { role: 'assistant', content: null, tool_calls: [call('a')] },
        { role: 'user', content: 'x' },
      ],
    ],
    [
      'an orphan result',
      [
        { role: 'user', content: 'x' },
        { role: 'tool', tool_call_id: 'a', content: 'ok' },
      ],
    ],
    [
      'an image in a tool message',
      [
        { role: 'assistant', content: null, tool_calls: [call('a')] },
        { role: 'tool', tool_call_id: 'a', content: [{ type: 'image_url', image_url: { url: 'x' } }] },
      ],
    ],
    ['an empty content array', [{ role: 'user', content: [] }]],
    [
      'an assistant with no content nor calls',
      [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null },
      ],
    ],
  ])('refuses %s', (_, messages) => {
    expect(chatProblems({ messages })).not.toEqual([]);
  });
});

describe('OpenAI Responses rules', () => {
  const reasoning = { type: 'reasoning', id: 'rs_1', summary: [] };
  const fc = { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'probe', arguments: '{}' };
  const out = { type: 'function_call_output', call_id: 'c1', output: 'ok' };
  const user = { role: 'user', content: [{ type: 'input_text', text: 'go' }] };

  it('takes a reasoning item before its call, the call before its output', () => {
    expect(responsesProblems({ input: [user, reasoning, fc, out] }, [user, reasoning, fc, out])).toEqual([]);
  });

  it.each([
    ['a reasoning item followed by a user message', [reasoning, user]],
    ['a reasoning item last', [user, reasoning]],
    ['an output before its call', [user, out, fc]],
    ['a call with no output', [user, fc]],
    ['a duplicate item id', [user, fc, out, { ...fc, call_id: 'c2' }, { ...out, call_id: 'c2' }]],
    [
      'an input_text part on the assistant',
      [{ role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }],
    ],
  ])('refuses %s', (_, input) => {
    expect(responsesProblems({ input })).not.toEqual([]);
  });

  it('refuses a call sent with its id without the reasoning item it came after', () => {
    expect(responsesProblems({ input: [user, fc, out] }, [user, reasoning, fc, out])).not.toEqual([]);
  });
});

describe('Anthropic Messages rules', () => {
  const thinking = { type: 'thinking', thinking: 'plan', signature: 'sig' };

  it('takes parallel tool_use answered in the next user turn, results first, thinking as given', () => {
    const messages = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [thinking, use('a'), use('b')] },
      { role: 'user', content: [result('b'), result('a'), { type: 'text', text: 'more' }] },
    ];
    expect(
      anthropicProblems({ messages, thinking: { type: 'enabled', budget_tokens: 1024 } }, messages),
    ).toEqual([]);
  });

  it.each([
    [
      'an assistant turn first',
      [
        { role: 'assistant', content: 'hi' },
        { role: 'user', content: 'x' },
      ],
    ],
    [
      'text before the tool_result blocks',
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [use('a')] },
        { role: 'user', content: [{ type: 'text', text: 'x' }, result('a')] },
      ],
    ],
    [
      'a tool_use answered a turn late',
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [use('a')] },
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'y' },
        { role: 'user', content: [result('a')] },
      ],
    ],
    ['an empty text block', [{ role: 'user', content: [{ type: 'text', text: '' }] }]],
    [
      'a repeated tool_use id',
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [use('a')] },
        { role: 'user', content: [result('a')] },
        { role: 'assistant', content: [use('a')] },
        { role: 'user', content: [result('a')] },
      ],
    ],
    [
      'a system role',
      [
        { role: 'system', content: 'x' },
        { role: 'user', content: 'x' },
      ],
    ],
  ])('refuses %s', (_, messages) => {
    expect(anthropicProblems({ messages })).not.toEqual([]);
  });

  it('refuses a fifth cache mark, and a mark on a thinking block', () => {
    const mark = { cache_control: { type: 'ephemeral' } };
    const text = (t: string) => ({ type: 'text', text: t, ...mark });
    const five = [{ role: 'user', content: [text('a'), text('b'), text('c'), text('d'), text('e')] }];
    expect(anthropicProblems({ messages: five })).not.toEqual([]);
    expect(anthropicProblems({ messages: five.map((m) => ({ ...m, content: m.content.slice(1) })) })).toEqual(
      [],
    );
    const marked = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ ...thinking, ...mark }, use('a')] },
      { role: 'user', content: [result('a')] },
    ];
    expect(anthropicProblems({ messages: marked })).not.toEqual([]);
  });

  it('refuses a tool loop turn without its thinking, and thinking not as given', () => {
    const messages = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [use('a')] },
      { role: 'user', content: [result('a')] },
    ];
    expect(anthropicProblems({ messages, thinking: { type: 'enabled', budget_tokens: 1024 } })).not.toEqual(
      [],
    );
    const edited = [
      messages[0],
      { role: 'assistant', content: [{ ...thinking, thinking: 'plan, shortened' }, use('a')] },
      messages[2],
    ];
    expect(
      anthropicProblems({ messages: edited }, [
        messages[0],
        { role: 'assistant', content: [thinking, use('a')] },
        messages[2],
      ]),
    ).not.toEqual([]);
  });
});
