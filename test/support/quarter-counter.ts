import type { TokenCounter } from '../../src/core/counting/token-counter.js';
import type { CompactMessage } from '../../src/core/messages/message.js';

/**
 * About four characters a token, like English text and code: a fast, deterministic counter
 * for long generated sessions (a message counts its text, call names and arguments, and
 * results, plus 4).
 */
export const quarterCounter: TokenCounter = {
  name: 'quarter-chars',
  exact: true,
  requestOverhead: 0,
  countText: (text) => Math.ceil(text.length / 4),
  countMessage: (m: CompactMessage) =>
    Math.ceil(
      (m.text.length +
        m.toolCalls.reduce((s, c) => s + c.name.length + c.arguments.length, 0) +
        m.toolResults.reduce((s, r) => s + r.output.length, 0)) /
        4,
    ) + 4,
  countTools: (tools) => Math.ceil(JSON.stringify(tools).length / 4),
};
