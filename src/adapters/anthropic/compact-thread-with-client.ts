import type Anthropic from '@anthropic-ai/sdk';
import { CompactError } from '../../core/errors.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactionResult } from '../../core/manager/manager-options.js';
import type { MessageMeta } from '../../core/messages/message.js';
import { anthropicSummarizer } from '../../summarizers/anthropic/anthropic-summarizer.js';
import { THREAD_SUMMARY_SYSTEM_PROMPT } from './thread-summary-prompt.js';

/** A thread message of the spec form: a Slack-style text turn (or any Anthropic `MessageParam`). */
export interface ThreadMessage {
  role: 'user' | 'assistant';
  content: string | readonly unknown[];
  meta?: MessageMeta;
}

/**
 * Arguments of {@link compactThreadHistory} without a manager (the spec's form): the helper
 * builds a throwaway manager with the Anthropic summarizer and the thread prompt.
 */
export interface CompactThreadWithClientArgs<M extends ThreadMessage = ThreadMessage> {
  /** The thread so far, oldest first. */
  threadHistory: readonly M[];
  /**
   * The new user message: counted and never summarized, but not part of `compactedHistory`
   * (append it yourself, as the spec's handler does).
   */
  userMessage?: string;
  /** The agent's system prompt (counted, never summarized). */
  systemPrompt?: string;
  /** The `@anthropic-ai/sdk` client the summary call goes through. */
  anthropic: Anthropic;
  /** The model: it names the window and writes the summary. */
  model: string;
  /**
   * Room of the summary, in tokens.
   * @default 1024
   */
  maxSummaryTokens?: number;
  /**
   * Messages at the end of the thread kept verbatim.
   * @default 6
   */
  keepLastN?: number;
  /** Recorded with the events (and the summary request's trace). */
  traceId?: string;
  /**
   * The context window. Unset for an unknown model, the manager's conservative default applies.
   * @default the model table's window for `model`
   */
  maxContextTokens?: number;
  /**
   * A bound on the whole compaction, summary call included; past it the thread comes back
   * unchanged with `compactionApplied: false` (the spec's best effort).
   * @default 20000
   */
  timeoutMs?: number;
}

/** The spec's result fields. */
export interface ThreadCompactionFields<M> {
  /**
   * The history to send: a summary message, then the kept messages (or the original history).
   * In the spec's form the new user message is not in it: the caller appends it.
   */
  compactedHistory: M[];
  /** The summary's text, `''` when none was written. */
  summary: string;
  /** Tokens of the request before compaction (system prompt and new message included). */
  originalEstimatedTokens: number;
  /** Tokens of the request after compaction. */
  compactedEstimatedTokens: number;
  /** Whether the history was rewritten: `false` when nothing needed it or the summarizer failed. */
  compactionApplied: boolean;
}

/** The spec form's result: the spec's fields and why compaction was not applied, when it was not. */
export interface ThreadCompactionResult<M> extends ThreadCompactionFields<M> {
  /** Why compaction was not applied (e.g. `summarizer_failed`), when it was not. */
  reason?: string;
}

/** The spec's fields of a manager's result. */
export function threadFields<M>(result: CompactionResult<M>): ThreadCompactionFields<M> {
  return {
    compactedHistory: result.messages,
    summary: result.summary?.text ?? '',
    originalEstimatedTokens: result.tokensBefore,
    compactedEstimatedTokens: result.tokensAfter,
    compactionApplied: result.applied,
  };
}

function checkArgs(args: CompactThreadWithClientArgs): void {
  const anthropic = args.anthropic as { messages?: { create?: unknown } } | undefined;
  if (typeof anthropic?.messages?.create !== 'function') {
    throw new CompactError('invalid_config', 'compactThreadHistory: anthropic must be an Anthropic client', {
      issues: [{ path: ['anthropic'], message: 'must be an @anthropic-ai/sdk client' }],
    });
  }
  if (typeof args.model !== 'string' || args.model === '') {
    throw new CompactError('invalid_config', 'compactThreadHistory: model must be a model name', {
      issues: [{ path: ['model'], message: 'must be a non-empty string' }],
    });
  }
  const keep = args.keepLastN;
  if (keep !== undefined && !(Number.isInteger(keep) && keep >= 0)) {
    throw new CompactError('invalid_config', 'compactThreadHistory: keepLastN must be an integer >= 0', {
      issues: [{ path: ['keepLastN'], message: 'must be an integer >= 0' }],
    });
  }
}

/**
 * The spec's `compactThreadHistory` (no manager): summarizes the oldest part of the thread with
 * the Anthropic client, keeps the last `keepLastN` messages verbatim, and puts one summary
 * message before them. Best effort: when the summary call fails or runs past `timeoutMs`, the
 * original history comes back with `compactionApplied: false`.
 */
export async function compactThreadWithClient<M extends ThreadMessage>(
  args: CompactThreadWithClientArgs<M>,
): Promise<ThreadCompactionResult<M | ThreadMessage>> {
  checkArgs(args);
  const { threadHistory, userMessage, systemPrompt, keepLastN = 6, timeoutMs = 20_000 } = args;
  const original: (M | ThreadMessage)[] =
    userMessage === undefined
      ? [...threadHistory]
      : [...threadHistory, { role: 'user', content: userMessage }];
  const manager = new CompactManager({
    model: args.model,
    ...(args.maxContextTokens === undefined ? {} : { maxContextTokens: args.maxContextTokens }),
    summarizer: anthropicSummarizer({
      model: args.model,
      client: args.anthropic,
      prompts: { default: THREAD_SUMMARY_SYSTEM_PROMPT },
      maxRetries: 0,
    }),
    summarizerTimeoutMs: timeoutMs,
    // The spec's shape, one summary then the last keepLastN: earlier user words are summarized
    // (first, in the summary's request sections) rather than kept verbatim beside it.
    policy: {
      keepRecentTurns: 1,
      keepToolIoPairs: 1,
      clearKeepRecent: keepLastN,
      userTextShare: 0,
      ...summaryRoom(args),
    },
  });
  // The last keepLastN thread messages stay verbatim: marked protected on copies.
  const firstKept = Math.max(0, threadHistory.length - keepLastN);
  const sources = new Map<object, M | ThreadMessage>();
  const marked = original.map((message, index) => {
    if (index < firstKept) return message;
    const copy = { ...message, meta: { ...message.meta, protected: true } };
    sources.set(copy, message);
    return copy;
  });
  // The spec's contract: on any failure the original history, the new user message not in it
  // (the caller appends it itself).
  const unchanged = (reason: string, tokens?: number): ThreadCompactionResult<M | ThreadMessage> => ({
    compactedHistory: [...threadHistory],
    summary: '',
    originalEstimatedTokens: tokens ?? 0,
    compactedEstimatedTokens: tokens ?? 0,
    compactionApplied: false,
    reason,
  });
  try {
    if (threadHistory.length <= keepLastN)
      return unchanged('nothing_to_summarize', await countOf(manager, original, systemPrompt));
    const result = await manager.compact(`thread-${args.traceId ?? crypto.randomUUID()}`, marked, {
      force: true,
      format: 'anthropic',
      ...(systemPrompt === undefined ? {} : { system: systemPrompt }),
      ...(args.traceId === undefined ? {} : { traceId: args.traceId }),
    });
    if (result.summary?.fallback !== undefined) return unchanged('summarizer_failed', result.tokensBefore);
    const fields = threadFields(result);
    // Copies handed back without the protection mark this helper added; the new user message,
    // counted and sent last to the manager, is the caller's to append (as in the spec).
    const sent = userMessage === undefined ? result.messages : result.messages.slice(0, -1);
    fields.compactedHistory = sent.map((message) => sources.get(message) ?? message);
    return fields;
  } catch (error) {
    return unchanged((error as { code?: string }).code ?? 'compaction_failed');
  } finally {
    await manager.shutdown().catch(() => undefined);
  }
}

function summaryRoom(args: CompactThreadWithClientArgs): { maxSummaryTokens?: number } {
  return args.maxSummaryTokens === undefined ? {} : { maxSummaryTokens: args.maxSummaryTokens };
}

async function countOf(manager: CompactManager, messages: readonly ThreadMessage[], system?: string) {
  const estimate = await manager.estimate(messages, {
    format: 'anthropic',
    ...(system === undefined ? {} : { system }),
  });
  return estimate.total;
}
