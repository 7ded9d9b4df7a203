/** A preparation job folding one short user message, as the queue tests hand a worker directly. */
import type { CompactMessage } from '../../../src/core/messages/message.js';
import type { PreparationJob } from '../../../src/core/queues/preparation-queue.js';

const message: CompactMessage = {
  id: 'm0',
  role: 'user',
  kind: 'message',
  text: 'hello',
  toolCalls: [],
  toolResults: [],
  index: 0,
  format: 'openai-chat',
  raw: { role: 'user', content: 'hello' },
};

/** The job of session `key` at version 0, with its `deadline` when given. */
export function oneMessageJob(key: string, deadline?: number): PreparationJob {
  return {
    key,
    sessionId: key,
    baseVersion: 0,
    foldedIds: ['m0'],
    foldedHashes: ['h0'],
    messages: [message],
    strategy: 'structured',
    maxTokens: 500,
    enqueuedAt: Date.now(),
    ...(deadline === undefined ? {} : { deadline }),
  };
}
