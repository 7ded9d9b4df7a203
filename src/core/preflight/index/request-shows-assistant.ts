import type { PreflightOptions } from '../../manager/manager-options.js';
import type { IndexedMessage } from '../../messages/message-index.js';

/**
 * True when the request shows an AI assistant on the other side: a system prompt sent apart
 * (Anthropic `system`, Agents `instructions`), tool definitions, or a system or developer
 * message, a tool call or a tool result anywhere in its messages (pinned ones, the verbatim
 * suffix). The summarizer then reads the folded messages as said to that assistant even when
 * the folded span shows none of it (a first fold of the opening user message alone, review-86d).
 */
export function requestShowsAssistant(
  items: readonly IndexedMessage[],
  options: Pick<PreflightOptions, 'tools' | 'system'>,
): boolean {
  if ((options.tools?.length ?? 0) > 0) return true;
  if (typeof options.system === 'string' ? options.system.trim() !== '' : (options.system?.length ?? 0) > 0)
    return true;
  for (const item of items) {
    const { role, toolCalls, toolResults } = item.entry.parsed;
    if (role === 'system' || role === 'developer' || role === 'tool') return true;
    if (toolCalls.length > 0 || toolResults.length > 0) return true;
  }
  return false;
}
