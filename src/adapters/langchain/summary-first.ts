/**
 * The summary's place in a LangChain model call: the core's rule (`summaryFirst`, see
 * `src/core/messages/summary-first.ts`) over LangChain messages. The summary is written as a
 * `HumanMessage` wherever it goes; it moves first when an AI message (a protected tool round
 * kept ahead of it) would open the call after the system messages.
 */
import type { BaseMessage } from '@langchain/core/messages';
import {
  type OpeningTurn,
  summaryFirst as placeSummary,
  type TurnForm,
} from '../../core/messages/summary-first.js';

const summaries = new WeakSet<object>();

/** Records `message` as a summary the conversion wrote (not a caller's message). */
export function markSummary<T extends object>(message: T): T {
  summaries.add(message);
  return message;
}

function typeOf(message: BaseMessage): string | undefined {
  const loose = message as { type?: unknown; _getType?: () => string };
  return typeof loose.type === 'string' ? loose.type : loose._getType?.();
}

const LANGCHAIN_TURNS: TurnForm<BaseMessage> = {
  turnOf(message): OpeningTurn {
    const type = typeOf(message);
    if (type === 'system' || type === 'developer') return 'system';
    return type === 'human' ? 'user' : 'other';
  },
  // Written as a HumanMessage already (see `created` in langchain-messages.ts).
  asUser: (summary) => summary,
};

/** `messages` with the summary first when an AI message would open them; the same array when nothing moves. */
export function summaryFirst(messages: BaseMessage[]): BaseMessage[] {
  return placeSummary(messages, (message) => summaries.has(message), LANGCHAIN_TURNS) as BaseMessage[];
}
