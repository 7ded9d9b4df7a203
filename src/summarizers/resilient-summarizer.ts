import { CompactError, type CompactErrorCode, isCompactError } from '../core/errors.js';
import type { SummarizeRequest, SummarizeResult, Summarizer } from '../core/summary/summarizer.js';
import {
  checkSummaryOutput,
  SummaryRejectedError,
  summaryRejectionOf,
  summarySourceText,
} from '../core/summary/summary-guard.js';
import {
  type CircuitBreaker,
  type CircuitEvent,
  type CircuitSharedState,
  circuitBreakerFor,
  DEFAULT_CIRCUIT_BREAKER,
} from './circuit-breaker.js';

export { DEFAULT_CIRCUIT_BREAKER } from './circuit-breaker.js';

/** Default time limit of one attempt (one model call), in ms. */
export const DEFAULT_RESILIENT_TIMEOUT_MS = 20_000;

/** Default time limit of one `summarize` call, every attempt and retry strategy included, in ms. */
export const DEFAULT_TOTAL_TIMEOUT_MS = 30_000;

/** Options of {@link resilientSummarizer}. */
export interface ResilientSummarizerOptions {
  /**
   * Time limit of one attempt (one call to the inner summarizer), in ms; past it the call is
   * aborted through its `AbortSignal` and `CompactError('summarizer_timeout')` is thrown.
   * @default 20000
   */
  timeoutMs?: number;
  /**
   * Time limit of one `summarize` call, in ms: the first attempt, the shorter retries and the
   * refusal retry share it (each attempt gets what is left, at most `timeoutMs`). It is also
   * the wrapper's `maxDurationMs`.
   * @default 30000
   */
  totalTimeoutMs?: number;
  /**
   * Retries with the token limit halved when a summary is longer than `maxTokens`.
   * @default 2
   */
  maxLengthRetries?: number;
  /**
   * Strategy of the single retry after a refusal (structured, or plain text such as
   * "I'm sorry, but I can't help with that.").
   * @default 'brief'
   */
  refusalRetryStrategy?: string;
  /**
   * Circuit breaker, one per provider and model shared by every session and wrapper of the
   * process (see `circuitBreakerFor`): after `failureThreshold` consecutive failed
   * summarizations (errors and timeouts, whichever layer's limit expired; not the caller's own
   * abort, and not refusals or rejected outputs, which the provider did answer) calls fail fast (errorType `circuit_open`) for `cooldownMs`; then a single probe is
   * let through, and its success closes the circuit. Until the first success (`startHalfOpen`,
   * default true) calls also go one at a time. The first wrapper of a `key` sets its
   * thresholds. `shared` carries the state across processes. `false` disables it.
   * @default { failureThreshold: 3, cooldownMs: 60000, key: inner.name }
   */
  circuitBreaker?:
    | false
    | {
        failureThreshold?: number;
        cooldownMs?: number;
        key?: string;
        shared?: CircuitSharedState;
        startHalfOpen?: boolean;
      };
  /**
   * Clock, injectable for tests (used by a breaker this wrapper creates).
   * @default Date.now
   */
  now?: () => number;
}

/** A summarizer wrapped by {@link resilientSummarizer}. */
export interface ResilientSummarizer extends Summarizer {
  /** The wrapped summarizer. */
  readonly inner: Summarizer;
  /** The shared breaker, or `undefined` when disabled. */
  readonly breaker: CircuitBreaker | undefined;
  /**
   * The circuit state (shared by every session; `sessionId` is accepted for compatibility):
   * consecutive failures and, when open, until when.
   */
  circuit(sessionId?: string): { failures: number; open: boolean; openUntil?: number };
}

/** True when `reason` says a time limit expired (ours, the manager's, or `AbortSignal.timeout`). */
export function isTimeoutReason(reason: unknown): boolean {
  if (isCompactError(reason, 'summarizer_timeout')) return true;
  return reason instanceof Error && reason.name === 'TimeoutError';
}

/** Runs `task` with a signal that aborts after `timeoutMs` or when `outer` aborts. */
async function withTimeout<T>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  task: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  let onOuterAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      const error = new CompactError(
        'summarizer_timeout',
        `summarizer did not answer within ${timeoutMs} ms`,
      );
      controller.abort(error);
      reject(error);
    }, timeoutMs);
    onOuterAbort = () => {
      const error = outerAbortError(outer?.reason);
      controller.abort(error);
      reject(error);
    };
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
  });
  // An inner summarizer that ignores its signal still cannot hold the caller past the limit.
  stopped.catch(() => {});
  try {
    return await Promise.race([task(controller.signal), stopped]);
  } catch (error) {
    if (timedOut)
      throw new CompactError('summarizer_timeout', `summarizer did not answer within ${timeoutMs} ms`, {
        cause: error,
      });
    if (outer?.aborted) throw outerAbortError(outer.reason);
    throw error;
  } finally {
    clearTimeout(timer);
    if (onOuterAbort) outer?.removeEventListener('abort', onOuterAbort);
  }
}

/** The error for an aborted outer signal: a time limit of an outer layer, or the caller's abort. */
function outerAbortError(reason: unknown): CompactError {
  if (isTimeoutReason(reason)) {
    return new CompactError(
      'summarizer_timeout',
      `summarizer stopped by an outer time limit: ${messageOf(reason)}`,
      { cause: reason },
    );
  }
  return new CompactError('aborted', 'summarization aborted by the caller', { cause: reason });
}

/** True for failures of the output's content (the provider itself answered). */
function isContentFailure(error: unknown): boolean {
  return (
    summaryRejectionOf(error) !== undefined ||
    isCompactError(error, 'summarizer_refused') ||
    isCompactError(error, 'summary_too_long')
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The checked options of {@link resilientSummarizer}. */
function resolveOptions(inner: Summarizer, options: ResilientSummarizerOptions) {
  const totalTimeoutMs = options.totalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS;
  const timeoutMs = options.timeoutMs ?? Math.min(DEFAULT_RESILIENT_TIMEOUT_MS, totalTimeoutMs);
  if (!(timeoutMs > 0))
    throw new CompactError('invalid_config', 'resilientSummarizer: timeoutMs must be > 0');
  if (!(totalTimeoutMs > 0))
    throw new CompactError('invalid_config', 'resilientSummarizer: totalTimeoutMs must be > 0');
  const settings = options.circuitBreaker === false ? undefined : (options.circuitBreaker ?? {});
  const threshold = settings?.failureThreshold ?? DEFAULT_CIRCUIT_BREAKER.failureThreshold;
  if (settings && !(threshold >= 1)) {
    throw new CompactError(
      'invalid_config',
      'resilientSummarizer: circuitBreaker.failureThreshold must be >= 1',
    );
  }
  const breaker = settings
    ? circuitBreakerFor(settings.key ?? breakerKey(inner), {
        failureThreshold: threshold,
        cooldownMs: settings.cooldownMs ?? DEFAULT_CIRCUIT_BREAKER.cooldownMs,
        ...(settings.shared ? { shared: settings.shared } : {}),
        ...(settings.startHalfOpen === undefined ? {} : { startHalfOpen: settings.startHalfOpen }),
        ...(options.now ? { now: options.now } : {}),
      })
    : undefined;
  return {
    timeoutMs,
    totalTimeoutMs,
    maxLengthRetries: options.maxLengthRetries ?? 2,
    refusalStrategy: options.refusalRetryStrategy ?? 'brief',
    breaker,
  };
}

/**
 * One summarization with the retries: a time limit per attempt within the total budget
 * (`summarizer_timeout`), retries with halved `maxTokens` when the summary is too long (then
 * `summary_too_long`), one retry with the `brief` strategy after a refusal, structured or in
 * plain text (then `summarizer_refused`), and the output check (`summarizer_failed`).
 */
async function attempt(
  inner: Summarizer,
  request: SummarizeRequest,
  settings: ReturnType<typeof resolveOptions>,
): Promise<SummarizeResult> {
  const report = (
    errorType: CompactErrorCode,
    message: string,
    fallback: string,
    context: Record<string, unknown>,
  ) =>
    request.reportError?.({ errorType, message, fallback, context: { summarizer: inner.name, ...context } });
  const deadline = Date.now() + settings.totalTimeoutMs;
  let strategy = request.strategy;
  let maxTokens = request.maxTokens;
  let lengthRetries = 0;
  let refusalRetried = false;
  let source: string | undefined;
  for (let call = 1; ; call++) {
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new CompactError(
        'summarizer_timeout',
        `${inner.name}: the total time limit of ${settings.totalTimeoutMs} ms was spent after ${call - 1} attempts`,
      );
    }
    let failure: CompactError;
    try {
      const result = await withTimeout(Math.min(settings.timeoutMs, left), request.signal, (signal) =>
        inner.summarize({ ...request, strategy, maxTokens, signal }),
      );
      const tokens = request.countTokens(result.text);
      if (tokens > request.maxTokens) {
        throw new CompactError(
          'summary_too_long',
          `summary has ${tokens} tokens, over the limit of ${request.maxTokens}`,
        );
      }
      source ??= summarySourceText(request.messages, request.previousSummary);
      const check = checkSummaryOutput(result.text, { strategy: String(strategy), prompt: source });
      if (!check.ok) throw new SummaryRejectedError(check.reason, `${inner.name}: ${check.message}`);
      return { summarizer: inner.name, ...result };
    } catch (error) {
      failure = isCompactError(error)
        ? error
        : new CompactError('summarizer_failed', `${inner.name}: ${messageOf(error)}`, { cause: error });
    }
    if (failure.code === 'summary_too_long' && lengthRetries < settings.maxLengthRetries) {
      lengthRetries++;
      const next = Math.max(1, Math.floor(maxTokens / 2));
      report('summary_too_long', failure.message, 'retry_shorter', {
        attempt: call,
        maxTokens,
        retryMaxTokens: next,
      });
      maxTokens = next;
      continue;
    }
    if (failure.code === 'summary_too_long') {
      throw new CompactError(
        'summary_too_long',
        `${failure.message} after ${lengthRetries} shorter retries`,
        {
          cause: failure,
        },
      );
    }
    if (failure.code === 'summarizer_refused' && !refusalRetried) {
      refusalRetried = true;
      report('summarizer_refused', failure.message, `retry_${settings.refusalStrategy}`, {
        attempt: call,
        strategy,
      });
      strategy = settings.refusalStrategy;
      continue;
    }
    throw failure;
  }
}

/**
 * Wraps a summarizer with the failure policy: a time limit per attempt and one total budget
 * per call (`summarizer_timeout`), retries with halved `maxTokens` when the summary is too long
 * (then `summary_too_long`), one retry with the `brief` strategy after a refusal (then
 * `summarizer_refused`), the output check of `checkSummaryOutput` (plain-text refusals,
 * missing structure, echoes), and a circuit breaker shared per provider and model
 * (`summarizer_failed`, reported as `circuit_open`; transitions reported through
 * `request.reportCircuit`). Every recovered failure is reported through `request.reportError`;
 * the final failure is thrown (never returned as summary text), and the manager falls back to
 * the embedded summarizer, then to pruning only.
 *
 * @example
 * ```ts
 * const summarizer = resilientSummarizer(openaiSummarizer({ model: 'gpt-4o-mini' }), { timeoutMs: 15_000 });
 * ```
 */
export function resilientSummarizer(
  inner: Summarizer,
  options: ResilientSummarizerOptions = {},
): ResilientSummarizer {
  const settings = resolveOptions(inner, options);
  const { breaker } = settings;
  return {
    name: inner.name,
    maxDurationMs: settings.totalTimeoutMs,
    inner,
    breaker,
    circuit() {
      if (!breaker) return { failures: 0, open: false };
      const { state, failures, openUntil } = breaker.snapshot();
      return { failures, open: state === 'open', ...(openUntil === undefined ? {} : { openUntil }) };
    },
    async summarize(request) {
      if (!breaker) return attempt(inner, request, settings);
      const onEvent = (event: CircuitEvent) => {
        const { at: _at, ...report } = event;
        request.reportCircuit?.(report);
      };
      const ticket = await breaker.acquire(onEvent);
      if (!ticket.allowed) {
        const message =
          ticket.state === 'open'
            ? `circuit ${breaker.key} open after ${ticket.failures} consecutive failures; LLM skipped until ${new Date(ticket.retryAt).toISOString()}`
            : `circuit ${breaker.key} half-open: one call is in flight to see whether the provider answers; LLM skipped for this one`;
        request.reportError?.({
          errorType: ticket.state === 'open' ? 'circuit_open' : 'circuit_half_open',
          message,
          fallback: 'embedded',
          context: {
            summarizer: inner.name,
            key: breaker.key,
            failures: ticket.failures,
            retryAt: ticket.retryAt,
          },
        });
        throw new CompactError('summarizer_failed', message);
      }
      try {
        const result = await attempt(inner, request, settings);
        breaker.success(ticket, onEvent);
        return result;
      } catch (error) {
        // The caller's own abort says nothing about the provider's health; every time limit does.
        if (isCompactError(error, 'aborted')) breaker.release(ticket);
        // A refusal, a rejected or over-long output: the provider answered. Counting these would
        // let one session's transcript switch the LLM off for every session.
        else if (isContentFailure(error)) breaker.success(ticket, onEvent);
        else breaker.failure(ticket, messageOf(error), onEvent);
        throw error;
      }
    },
  };
}

/**
 * The default breaker key: the summarizer's name (`provider:model`) and, when it says where its
 * calls go, the endpoint (`openai:gpt-4o-mini@http://10.0.0.5:8000/v1`). Summarizers with the
 * same name and endpoint share one breaker in the process; a custom `circuitBreaker.key` wins.
 */
export function breakerKey(inner: Pick<Summarizer, 'name' | 'endpoint'>): string {
  return inner.endpoint === undefined ? inner.name : `${inner.name}@${inner.endpoint}`;
}
