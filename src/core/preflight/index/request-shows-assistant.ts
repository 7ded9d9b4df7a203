import type { PreflightOptions } from '../../manager/manager-options.js';
import type { ParsedMessage } from '../../messages/formats/message-codec.js';

/** True for a message that shows an assistant: a system, developer or tool message, a tool call or result. */
export function showsAssistant({ role, toolCalls, toolResults }: ParsedMessage): boolean {
  return (
    role === 'system' ||
    role === 'developer' ||
    role === 'tool' ||
    toolCalls.length > 0 ||
    toolResults.length > 0
  );
}

/**
 * True when the request shows an AI assistant on the other side: a system prompt sent apart
 * (Anthropic `system`, Agents `instructions`), tool definitions, or a system or developer
 * message, a tool call or a tool result anywhere in its messages (pinned ones, the verbatim
 * suffix). The summarizer then reads the folded messages as said to that assistant even when
 * the folded span shows none of it (a first fold of the opening user message alone, review-86d).
 * The messages' part is the index's count of such messages (kept as it grows and rolls back):
 * a walk of 300k messages here held the loop ~30 ms (issue 47).
 */
export function requestShowsAssistant(
  indexed: { readonly assistantShown: number },
  options: Pick<PreflightOptions, 'tools' | 'system'>,
): boolean {
  if ((options.tools?.length ?? 0) > 0) return true;
  if (typeof options.system === 'string' ? options.system.trim() !== '' : (options.system?.length ?? 0) > 0)
    return true;
  return indexed.assistantShown > 0;
}
