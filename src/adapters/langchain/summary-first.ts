/**
 * The summary's place in a LangChain model call. The manager keeps pinned messages ahead of the
 * summary; a protected tool round among them would open the call with an assistant turn, which
 * Anthropic and Gemini refuse: the summary (a user turn) then goes first, as the manager orders
 * an Anthropic-format request.
 */
import type { BaseMessage } from '@langchain/core/messages';

const summaries = new WeakSet<object>();

/** Records `message` as a summary the conversion wrote (not a caller's message). */
export function markSummary<T extends object>(message: T): T {
  summaries.add(message);
  return message;
}

/** `messages` with the summary first when an AI message would open them; the same array when nothing moves. */
export function summaryFirst(messages: BaseMessage[]): BaseMessage[] {
  const first = messages[0] as { type?: unknown; _getType?: () => string } | undefined;
  const type = typeof first?.type === 'string' ? first.type : first?._getType?.();
  if (type !== 'ai') return messages;
  const at = messages.findIndex((message) => summaries.has(message));
  if (at <= 0) return messages;
  return [messages[at]!, ...messages.slice(0, at), ...messages.slice(at + 1)];
}
