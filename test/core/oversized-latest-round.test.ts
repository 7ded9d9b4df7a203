/**
 * Review 80 (a new user's hostile review): the latest round holds more than the whole window.
 * The last resort (cut oversized) could not cut it, and every call of the session failed with
 * `insufficient_budget`, in two shapes:
 * - the text sits in a tool call's argument named like a wire field (`data`, `url`, `name`,
 *   `id` ...): `write_file({path, data})`, `http_request({url, data})`. The cut skipped those
 *   keys (kept whole on wire objects: ids, base64 data, signatures) inside the call's own
 *   arguments too, as JSON text (Chat, Responses) or as Anthropic's `tool_use.input` (JSON
 *   text with no other string was cut as text: the arguments sent were no longer JSON);
 * - the text is split over several strings (a tool_result of two text blocks): the cut
 *   shortened the longest one only, to the size the whole message should keep, and the next
 *   try asked for one character less of the same string;
 *   The same inside JSON arguments holding several long strings (two files' contents);
 * - the text is a plain-text document (Anthropic `source: {type: 'text', data}`): its `data`
 *   was skipped as bytes are.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { checkSoundRequest } from '../../src/testing/index.js';

const WINDOW = 8_000;
/** About 50 tokens a line: `lines(600)` is over three windows. */
const lines = (count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => `${tag} ${i}: ${'value '.repeat(40)}`).join('\n');

const CASES: {
  name: string;
  model: string;
  format: 'openai-chat' | 'openai-responses' | 'anthropic';
  history: unknown[];
}[] = [
  {
    name: 'Chat: write_file({path, data}) with the data over the window',
    model: 'gpt-4o',
    format: 'openai-chat',
    history: [
      { role: 'user', content: 'Write the export.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_0',
            type: 'function',
            function: {
              name: 'write_file',
              arguments: JSON.stringify({ path: 'out.csv', data: lines(600, 'row') }),
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', content: 'written' },
    ],
  },
  {
    name: 'Chat: write_files({first, second}) with two contents, each over the window',
    model: 'gpt-4o',
    format: 'openai-chat',
    history: [
      { role: 'user', content: 'Write both files.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_0',
            type: 'function',
            function: {
              name: 'write_files',
              arguments: JSON.stringify({ first: lines(300, 'a'), second: lines(300, 'b') }),
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', content: 'written' },
    ],
  },
  {
    name: 'Responses: http_request({url, data}) with the data over the window',
    model: 'gpt-4o',
    format: 'openai-responses',
    history: [
      { type: 'message', role: 'user', content: 'Post the export.' },
      {
        type: 'function_call',
        call_id: 'call_0',
        name: 'http_request',
        arguments: JSON.stringify({ url: 'https://example.test/in', data: lines(600, 'row') }),
      },
      { type: 'function_call_output', call_id: 'call_0', output: '201 Created' },
    ],
  },
  {
    name: 'Anthropic: tool_use input {url} over the window',
    model: 'claude-sonnet-4-6',
    format: 'anthropic',
    history: [
      { role: 'user', content: 'Fetch it.' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_0', name: 'fetch', input: { url: lines(600, 'q') } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'ok' }] },
    ],
  },
  {
    name: 'Anthropic: a tool_result of two text blocks, together over the window',
    model: 'claude-sonnet-4-6',
    format: 'anthropic',
    history: [
      { role: 'user', content: 'Read both logs.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_0', name: 'read_logs', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_0',
            content: [
              { type: 'text', text: lines(150, 'api') },
              { type: 'text', text: lines(150, 'db') },
            ],
          },
        ],
      },
    ],
  },
  {
    name: 'Anthropic: a plain-text document over the window in the newest user turn',
    model: 'claude-sonnet-4-6',
    format: 'anthropic',
    history: [
      { role: 'user', content: 'Hello.' },
      { role: 'assistant', content: 'Hi. Send the contract.' },
      {
        role: 'user',
        content: [
          {
            type: 'document',
            source: { type: 'text', media_type: 'text/plain', data: lines(600, 'clause') },
            title: 'contract.txt',
          },
          { type: 'text', text: 'Summarize this contract.' },
        ],
      },
    ],
  },
];

describe('a latest round larger than the window', () => {
  it.each(CASES)('$name: cut to fit, sound', async ({ model, format, history }) => {
    const manager = new CompactManager({ model, maxContextTokens: WINDOW });
    const given = structuredClone(history);
    const result = await manager.compact('oversized', history);
    await manager.shutdown();
    expect(history).toEqual(given);
    expect(result.levels.map((level) => level.level)).toContain('cut_oversized');
    expect(result.tokensAfter).toBeLessThanOrEqual(manager.budget);
    const violations = checkSoundRequest({
      request: result.messages,
      format,
      given: history,
      model,
      maxContextTokens: WINDOW,
    });
    expect(violations).toEqual([]);
    // Cut arguments stay JSON (the old fallback cut the JSON text itself when no key was cuttable).
    for (const message of result.messages as Record<string, unknown>[]) {
      const calls = (message.tool_calls as { function: { arguments: string } }[] | undefined) ?? [];
      for (const call of calls) expect(() => JSON.parse(call.function.arguments)).not.toThrow();
      if (message.type === 'function_call') expect(() => JSON.parse(String(message.arguments))).not.toThrow();
    }
  });
});
