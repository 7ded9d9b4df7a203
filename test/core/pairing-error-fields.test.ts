/**
 * Broken tool pairing is an `invalid_messages` error that names the field holding the call or
 * result, in the request's own format, as every other input error does (`messages[2].content`).
 * It read `messages[2].tool result` before, a path no message has.
 */
import { describe, expect, it } from 'vitest';
import { isCompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { MessageFormat } from '../../src/core/messages/message.js';

const call = {
  'openai-chat': {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{}' } }],
  },
  'openai-responses': { type: 'function_call', call_id: 'call_1', name: 'ls', arguments: '{}' },
  anthropic: {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Listing.' },
      { type: 'tool_use', id: 'call_1', name: 'ls', input: {} },
    ],
  },
};
const orphan = {
  'openai-chat': { role: 'tool', tool_call_id: 'call_9', content: 'a.txt' },
  'openai-responses': { type: 'function_call_output', call_id: 'call_9', output: 'a.txt' },
  anthropic: {
    role: 'user',
    content: [
      { type: 'text', text: 'Here:' },
      { type: 'tool_result', tool_use_id: 'call_9', content: 'a.txt' },
    ],
  },
};
const cases: [MessageFormat, string, string][] = [
  ['openai-chat', 'tool_calls.0', 'tool_call_id'],
  ['openai-responses', 'call_id', 'call_id'],
  ['anthropic', 'content.1', 'content.1'],
];

async function errorOf(format: MessageFormat, history: unknown[]) {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8000 });
  try {
    await manager.compact('s', history, { format });
  } catch (error) {
    return error;
  } finally {
    await manager.shutdown();
  }
  throw new Error('no error');
}

describe('a broken tool pairing names its field', () => {
  for (const [format, callField, resultField] of cases) {
    it(`${format}: an unanswered call at messages[1].${callField}`, async () => {
      const error = await errorOf(format, [{ role: 'user', content: 'List the files.' }, call[format]]);
      expect(isCompactError(error, 'invalid_messages')).toBe(true);
      expect((error as Error).message).toMatch(
        new RegExp(`^messages\\[1\\]\\.${callField.replace('.', '\\.')}: call "call_1"`),
      );
      expect((error as { issues?: { path: unknown[] }[] }).issues?.[0]?.path).toEqual([
        'messages',
        1,
        ...callField.split('.'),
      ]);
    });

    it(`${format}: an orphan result at messages[2].${resultField}`, async () => {
      const error = await errorOf(format, [
        { role: 'user', content: 'List the files.' },
        { role: 'assistant', content: 'Here they are.' },
        orphan[format],
      ]);
      expect(isCompactError(error, 'invalid_messages')).toBe(true);
      expect((error as Error).message).toMatch(
        new RegExp(`^messages\\[2\\]\\.${resultField.replace('.', '\\.')}: answers call "call_9"`),
      );
    });
  }
});
