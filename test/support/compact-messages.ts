/** Builders of internal-model messages for unit tests (private test support). */
import type { CompactMessage, ToolCall, ToolResult } from '../../src/core/messages/message.js';

/** Builds a list of messages with consecutive indices. */
export function messageList() {
  const messages: CompactMessage[] = [];
  const add = (role: CompactMessage['role'], text: string, extra: Partial<CompactMessage> = {}) => {
    const index = messages.length;
    const message: CompactMessage = {
      id: `m${index}`,
      index,
      role,
      kind: 'message',
      text,
      toolCalls: [],
      toolResults: [],
      format: 'openai-chat',
      raw: {},
      ...extra,
    };
    messages.push(message);
    return message;
  };
  return {
    messages,
    user: (text: string, extra: Partial<CompactMessage> = {}) => add('user', text, extra),
    assistant: (text: string, extra: Partial<CompactMessage> = {}) => add('assistant', text, extra),
    calls: (calls: ToolCall[], text = '') => add('assistant', text, { toolCalls: calls }),
    result: (result: ToolResult) => add('tool', '', { toolResults: [result] }),
  };
}
