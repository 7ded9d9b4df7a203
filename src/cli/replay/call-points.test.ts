import { describe, expect, it } from 'vitest';
import { callPoints } from './call-points.js';

describe('callPoints', () => {
  it('calls after a user message or the last tool result of a round, never after the model', () => {
    const chat = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u1' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a' }, { id: 'b' }] },
      { role: 'tool', tool_call_id: 'a', content: 'ra' },
      { role: 'tool', tool_call_id: 'b', content: 'rb' },
      { role: 'assistant', content: 'done' },
      { role: 'user', content: 'u2' },
      { role: 'user', content: 'u3' },
    ];
    expect(callPoints(chat)).toEqual([2, 5, 8]);
  });

  it('knows Responses items and Anthropic turns', () => {
    const responses = [
      { type: 'message', role: 'user', content: 'u' },
      { type: 'reasoning', id: 'r' },
      { type: 'function_call', call_id: 'c' },
      { type: 'function_call_output', call_id: 'c', output: 'o' },
      { type: 'message', role: 'assistant', content: 'a' },
    ];
    expect(callPoints(responses)).toEqual([1, 4]);
    const anthropic = [
      { role: 'user', content: 'u' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
    ];
    expect(callPoints(anthropic)).toEqual([1, 3]);
  });
});
