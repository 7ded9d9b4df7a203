import { CompactError } from '../../core/errors.js';
import type { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactionResult, CompactOptions } from '../../core/manager/manager-options.js';
import type { MessageMeta } from '../../core/messages/message.js';
import {
  type CompactThreadWithClientArgs,
  compactThreadWithClient,
  type ThreadCompactionFields,
  type ThreadCompactionResult,
  type ThreadMessage,
  threadFields,
} from './compact-thread-with-client.js';

/**
 * A thread message: plain text (as in a Slack thread) or any Anthropic `MessageParam`.
 * Add `meta` (e.g. `{ protected: true }`) to pin one; it is stripped from what is sent.
 */
export interface HistoryMessage {
  role: 'user' | 'assistant';
  content: string | readonly unknown[];
  meta?: MessageMeta;
}

/** What a thread message must look like: any Anthropic `MessageParam` fits, with or without `meta`. */
export interface ThreadMessageLike {
  role: string;
  content?: unknown;
}

export { THREAD_SUMMARY_SYSTEM_PROMPT } from './thread-summary-prompt.js';

/** Arguments of {@link compactThreadHistory}: the manager's per-call options, plus the thread. */
export interface CompactThreadHistoryArgs<
  M extends ThreadMessageLike = HistoryMessage,
  C extends UserTurn['content'] = string,
> extends CompactOptions {
  /** The manager: its window, policy, summarizer, events and archive apply. */
  manager: CompactManager;
  /** The thread's id (the manager's session id): one per thread, never shared. */
  sessionId: string;
  /** The thread so far, oldest first: the full history every turn, or the view you kept. */
  threadHistory: readonly M[];
  /** The new user message, appended last (counted, never summarized). */
  userMessage?: C;
  /** The agent's system prompt (counted, not summarized): the same as `system`. */
  systemPrompt?: CompactOptions['system'];
}

/** A thread message the helper appends: the new user message (its content as you passed it). */
export type UserTurn<C = string | readonly unknown[]> = { role: 'user'; content: C };

/**
 * Compacts a conversation thread before an Anthropic call, in one of two forms.
 *
 * With a `manager` (recommended): a thin helper over {@link CompactManager.compact} in the
 * Anthropic format, with the system prompt counted and the new user message appended. It is the
 * manager's engine, options, events and `CompactionResult`: one session per thread (the summary
 * grows as `vN`, never restarts from v1), the summarizer's input bounded by its own context,
 * tool_use and tool_result kept together, and a failing LLM summarizer falling back as the
 * manager's failure policy says. The result also carries the spec's fields
 * (`compactedHistory`, `originalEstimatedTokens`, `compactedEstimatedTokens`,
 * `compactionApplied`); its `summary` is the manager's (`summary?.text` is the spec's string).
 *
 * Without a manager (the spec's form): pass `anthropic`, `model`, `maxSummaryTokens`,
 * `keepLastN` and `traceId`; the oldest part is summarized with the thread prompt, the last
 * `keepLastN` messages are kept verbatim, and any failure gives back the original history with
 * `compactionApplied: false`. There `compactedHistory` never holds the new `userMessage` (it
 * is counted): the caller appends it, as the spec's handler does.
 *
 * @example
 * ```ts
 * const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: 200_000 });
 * const { messages } = await compactThreadHistory({ manager, sessionId: threadTs, systemPrompt,
 *   threadHistory, userMessage });
 * await anthropic.messages.create({ model, system: systemPrompt, max_tokens: 4096, messages });
 *
 * // The spec's form:
 * const { compactedHistory, compactionApplied } = await compactThreadHistory({
 *   threadHistory, userMessage, systemPrompt, anthropic, model, maxSummaryTokens: 1024,
 *   keepLastN: 6, traceId });
 * ```
 */
export function compactThreadHistory<M extends ThreadMessage>(
  args: CompactThreadWithClientArgs<M>,
): Promise<ThreadCompactionResult<M | ThreadMessage>>;
export function compactThreadHistory<M extends ThreadMessageLike, C extends UserTurn['content'] = string>(
  args: CompactThreadHistoryArgs<M, C>,
): Promise<CompactionResult<M | UserTurn<C>> & Omit<ThreadCompactionFields<M | UserTurn<C>>, 'summary'>>;
export async function compactThreadHistory(
  args: CompactThreadHistoryArgs<ThreadMessageLike, UserTurn['content']> | CompactThreadWithClientArgs,
): Promise<unknown> {
  if (args && !('manager' in args) && 'anthropic' in args) return compactThreadWithClient(args);
  return compactWithManager(args as CompactThreadHistoryArgs<ThreadMessageLike, UserTurn['content']>);
}

async function compactWithManager<M extends ThreadMessageLike, C extends UserTurn['content']>(
  args: CompactThreadHistoryArgs<M, C>,
) {
  const { manager, sessionId, threadHistory, userMessage, systemPrompt, ...options } = args ?? {};
  if (!manager || typeof manager.compact !== 'function') {
    throw new CompactError(
      'invalid_config',
      'compactThreadHistory: manager must be a CompactManager (or pass anthropic and model: the spec form)',
      {
        issues: [{ path: ['manager'], message: 'must be a CompactManager' }],
      },
    );
  }
  if (!Array.isArray(threadHistory)) {
    throw new CompactError('invalid_messages', 'compactThreadHistory: threadHistory must be an array', {
      issues: [{ path: ['threadHistory'], message: 'must be an array of messages' }],
    });
  }
  const messages: (M | UserTurn<C>)[] =
    userMessage === undefined
      ? [...threadHistory]
      : [...threadHistory, { role: 'user', content: userMessage }];
  const system = options.system ?? systemPrompt;
  const result = await manager.compact<M | UserTurn<C>>(sessionId, messages, {
    ...options,
    format: 'anthropic',
    ...(system === undefined ? {} : { system }),
  });
  // The manager's result keeps its own `summary` (text, version, summarizer); the spec's other
  // fields are added beside it.
  const { summary: _text, ...fields } = threadFields(result);
  return Object.assign(result, fields);
}
