/**
 * What every SDK integration shares after the preflight: recognising a provider's "request too
 * long" rejection, compacting again against the limit it reports, and feeding each response's
 * reported input tokens back to the manager.
 */

import type { CompactEventProperties } from '../core/events/events.js';
import type { CompactManager } from '../core/manager/compact-manager.js';
import type { CompactionResult, CompactOptions, ReportedUsage } from '../core/manager/manager-options.js';

/** A provider's rejection of a request for its length, with what the error said about it. */
export interface ContextOverflow {
  /** HTTP status (400 or 413 usually). */
  status?: number;
  /** The provider's message. */
  message: string;
  /** The context limit the message states, in the provider's tokens. */
  limit?: number;
  /** The size of the rejected request the message states, in the provider's tokens. */
  tokens?: number;
}

/** The budget used when the provider's error states no limit: this fraction of what was sent. */
export const UNKNOWN_LIMIT_FACTOR = 0.8;
/** Safety factor applied to a reported limit (counts never match a provider's exactly). */
export const REPORTED_LIMIT_FACTOR = 0.95;

const OVERFLOW_PATTERN =
  /context_length_exceeded|prompt is too long|maximum context length|context window|input is too long|request_too_large|too many (input )?tokens|reduce the length/i;

function numberOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text.replaceAll(',', '').replaceAll('_', ''));
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

function collectText(error: Record<string, unknown>): string {
  const parts: string[] = [];
  const push = (value: unknown) => {
    if (typeof value === 'string' && value !== '') parts.push(value);
  };
  push(error.message);
  push(error.responseBody); // AI SDK APICallError
  const body = error.error as Record<string, unknown> | undefined; // openai / anthropic APIError
  if (body && typeof body === 'object') {
    push(body.message);
    push(body.code);
    push(body.type);
    const inner = body.error as Record<string, unknown> | undefined;
    if (inner && typeof inner === 'object') {
      push(inner.message);
      push(inner.code);
      push(inner.type);
    }
  }
  push(error.code);
  return parts.join('\n');
}

/**
 * Recognises a provider's rejection of a request for its length: OpenAI
 * `context_length_exceeded`, Anthropic "prompt is too long", an HTTP 413, or an AI SDK
 * `APICallError` carrying one of those. Returns `undefined` for anything else (rate limits,
 * authentication, server errors), which the integrations rethrow unchanged.
 */
export function contextOverflowOf(error: unknown): ContextOverflow | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const e = error as Record<string, unknown>;
  const status =
    typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status !== undefined && status !== 400 && status !== 413) return undefined;
  const text = collectText(e);
  if (status !== 413 && !OVERFLOW_PATTERN.test(text)) return undefined;
  const overflow: ContextOverflow = { message: typeof e.message === 'string' ? e.message : text };
  if (status !== undefined) overflow.status = status;
  // Anthropic: "prompt is too long: 208310 tokens > 200000 maximum".
  const versus = /(\d[\d,]*)\s*tokens?\s*>\s*(\d[\d,]*)/i.exec(text);
  // OpenAI: "maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens".
  const limit = /(?:maximum context length|context window|limit) (?:is|of) (\d[\d,]*)/i.exec(text);
  const resulted = /resulted in (\d[\d,]*) tokens/i.exec(text) ?? /requested (\d[\d,]*) tokens/i.exec(text);
  const tokens = numberOf(versus?.[1] ?? resulted?.[1]);
  const max = numberOf(versus?.[2] ?? limit?.[1]);
  if (tokens !== undefined) overflow.tokens = tokens;
  if (max !== undefined) overflow.limit = max;
  return overflow;
}

/**
 * The window (in the manager's tokens) a retry is compacted against. With both figures the
 * provider's count is mapped onto the manager's (`limit x sent / reported`); with the limit
 * alone the smaller of limit and what was sent; without either {@link UNKNOWN_LIMIT_FACTOR} of
 * what was sent. Never above the manager's window.
 */
export function recoveryWindow(
  overflow: ContextOverflow,
  sentTokens: number,
  maxContextTokens: number,
): number {
  let window: number;
  if (overflow.limit !== undefined && overflow.tokens !== undefined) {
    window = (overflow.limit * sentTokens) / overflow.tokens;
  } else if (overflow.limit !== undefined) {
    window = Math.min(overflow.limit, sentTokens);
  } else {
    window = sentTokens * (UNKNOWN_LIMIT_FACTOR / REPORTED_LIMIT_FACTOR);
  }
  return Math.max(1, Math.floor(Math.min(window * REPORTED_LIMIT_FACTOR, maxContextTokens)));
}

/** The manager's optional event hook for integrations (see the report on `manager.emit`). */
interface EventEmitting {
  emit?: (
    sessionId: string,
    name: 'compact.overflow_recovery',
    properties: CompactEventProperties['compact.overflow_recovery'],
  ) => unknown;
}

/** What one recovery did. */
export interface OverflowRecovery<M> {
  /** The compaction of the retried request. */
  result: CompactionResult<M>;
  /** The event's properties (also emitted as `compact.overflow_recovery` when the manager can). */
  event: CompactEventProperties['compact.overflow_recovery'];
}

/**
 * Compacts `messages` again for a retry after `overflow`: forced, against
 * {@link recoveryWindow}, with a note naming the recovery in the trigger decision, and one
 * `compact.overflow_recovery` event.
 */
export async function compactForRetry<M>(
  manager: CompactManager,
  sessionId: string,
  messages: readonly M[],
  options: CompactOptions,
  recovery: { overflow: ContextOverflow; sentTokens: number; integration: string },
): Promise<OverflowRecovery<M>> {
  const { overflow, sentTokens, integration } = recovery;
  const window = recoveryWindow(overflow, sentTokens, manager.maxContextTokens);
  // The hard-cap buffer must stay below the smaller window.
  const hardCapBuffer = Math.min(manager.policy.hardCapBuffer, Math.floor(window / 10));
  const result = await manager.compact<M>(sessionId, messages, {
    ...options,
    force: true,
    maxContextTokens: window,
    policy: { ...options.policy, hardCapBuffer },
    note: `overflow_recovery: the provider rejected ${sentTokens} counted tokens${overflow.limit ? ` (limit ${overflow.limit})` : ''}; retrying within ${window}`,
  });
  const event: CompactEventProperties['compact.overflow_recovery'] = {
    integration,
    providerMessage: overflow.message,
    sentTokens,
    retryWindow: window,
    retryTokens: result.tokensAfter,
    ...(overflow.status === undefined ? {} : { status: overflow.status }),
    ...(overflow.limit === undefined ? {} : { reportedLimit: overflow.limit }),
    ...(overflow.tokens === undefined ? {} : { reportedTokens: overflow.tokens }),
  };
  (manager as unknown as EventEmitting).emit?.(sessionId, 'compact.overflow_recovery', event);
  return { result, event };
}

/**
 * Passes a response's reported input tokens to `manager.recordUsage`, ignoring responses that
 * report none (a streamed response without usage, a proxy that strips it). Never throws: usage
 * only calibrates, it must not fail a call that succeeded.
 */
export function feedUsage(manager: CompactManager, sessionId: string, usage: Partial<ReportedUsage>): void {
  const input = usage.inputTokens;
  if (typeof input !== 'number' || !Number.isFinite(input) || input < 0) return;
  const reported: ReportedUsage = { inputTokens: input };
  if (typeof usage.cacheReadInputTokens === 'number' && usage.cacheReadInputTokens > 0)
    reported.cacheReadInputTokens = usage.cacheReadInputTokens;
  if (typeof usage.cacheCreationInputTokens === 'number' && usage.cacheCreationInputTokens > 0)
    reported.cacheCreationInputTokens = usage.cacheCreationInputTokens;
  if (typeof usage.cachedInputTokens === 'number' && usage.cachedInputTokens > 0)
    reported.cachedInputTokens = Math.min(usage.cachedInputTokens, input);
  if (typeof usage.outputTokens === 'number' && usage.outputTokens >= 0)
    reported.outputTokens = usage.outputTokens;
  try {
    manager.recordUsage(sessionId, reported);
  } catch {
    // A malformed usage object is the provider's problem, not the caller's.
  }
}
