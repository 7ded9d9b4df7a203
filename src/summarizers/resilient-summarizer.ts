import { CompactError, isCompactError } from '../core/errors.js';
import type { SummarizeRequest, SummarizeResult, Summarizer } from '../core/summarizer.js';

/** Default time limit of one summarizer call, in ms. */
export const DEFAULT_RESILIENT_TIMEOUT_MS = 20_000;

/** Defaults of the per-session circuit breaker. */
export const DEFAULT_CIRCUIT_BREAKER = { failureThreshold: 3, cooldownMs: 60_000 } as const;

/** Options of {@link resilientSummarizer}. */
export interface ResilientSummarizerOptions {
  /**
   * Time limit of one call to the inner summarizer, in ms; past it the call is aborted through
   * its `AbortSignal` and `CompactError('summarizer_timeout')` is thrown.
   * @default 20000
   */
  timeoutMs?: number;
  /**
   * Retries with the token limit halved when a summary is longer than `maxTokens`.
   * @default 2
   */
  maxLengthRetries?: number;
  /**
   * Strategy of the single retry after a refusal.
   * @default 'brief'
   */
  refusalRetryStrategy?: string;
  /**
   * Per-session circuit breaker: after `failureThreshold` consecutive failed summarizations of
   * a session, calls fail fast (errorType `circuit_open`) for `cooldownMs`; then one call is let
   * through, and its success closes the circuit. `false` disables it.
   * @default { failureThreshold: 3, cooldownMs: 60000 }
   */
  circuitBreaker?: false | { failureThreshold?: number; cooldownMs?: number };
  /**
   * Clock, injectable for tests.
   * @default Date.now
   */
  now?: () => number;
}

interface CircuitState {
  failures: number;
  openUntil?: number;
}

/** A summarizer wrapped by {@link resilientSummarizer}. */
export interface ResilientSummarizer extends Summarizer {
  /** The wrapped summarizer. */
  readonly inner: Summarizer;
  /** The circuit state of a session: consecutive failures and, when open, until when. */
  circuit(sessionId: string): { failures: number; open: boolean; openUntil?: number };
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
      const error = new CompactError('aborted', 'summarization aborted by the caller', {
        cause: outer?.reason,
      });
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
    if (outer?.aborted)
      throw new CompactError('aborted', 'summarization aborted by the caller', { cause: outer.reason });
    throw error;
  } finally {
    clearTimeout(timer);
    if (onOuterAbort) outer?.removeEventListener('abort', onOuterAbort);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Wraps a summarizer with the failure policy: a time limit (`summarizer_timeout`), retries with
 * halved `maxTokens` when the summary is too long (then `summary_too_long`), one retry with the
 * `brief` strategy after a refusal (then `summarizer_refused`), and a per-session circuit
 * breaker (`summarizer_failed`, reported as `circuit_open`). Every recovered failure is reported
 * through `request.reportError`; the final failure is thrown (never returned as summary text),
 * and the manager falls back to the embedded summarizer, then to pruning only.
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
  const timeoutMs = options.timeoutMs ?? DEFAULT_RESILIENT_TIMEOUT_MS;
  const maxLengthRetries = options.maxLengthRetries ?? 2;
  const refusalStrategy = options.refusalRetryStrategy ?? 'brief';
  const breaker =
    options.circuitBreaker === false ? undefined : { ...DEFAULT_CIRCUIT_BREAKER, ...options.circuitBreaker };
  const now = options.now ?? Date.now;
  if (!(timeoutMs > 0))
    throw new CompactError('invalid_config', 'resilientSummarizer: timeoutMs must be > 0');
  if (breaker && !(breaker.failureThreshold >= 1)) {
    throw new CompactError(
      'invalid_config',
      'resilientSummarizer: circuitBreaker.failureThreshold must be >= 1',
    );
  }
  const circuits = new Map<string, CircuitState>();

  const attempt = async (request: SummarizeRequest): Promise<SummarizeResult> => {
    const report = (errorType: string, message: string, fallback: string, context: Record<string, unknown>) =>
      request.reportError?.({
        errorType,
        message,
        fallback,
        context: { summarizer: inner.name, ...context },
      });
    let strategy = request.strategy;
    let maxTokens = request.maxTokens;
    let lengthRetries = 0;
    let refusalRetried = false;
    for (let call = 1; ; call++) {
      let failure: CompactError;
      try {
        const result = await withTimeout(timeoutMs, request.signal, (signal) =>
          inner.summarize({ ...request, strategy, maxTokens, signal }),
        );
        const tokens = request.countTokens(result.text);
        if (result.text.trim() === '') {
          throw new CompactError('summarizer_failed', `${inner.name} returned an empty summary`);
        }
        if (tokens <= request.maxTokens) return { summarizer: inner.name, ...result };
        failure = new CompactError(
          'summary_too_long',
          `summary has ${tokens} tokens, over the limit of ${request.maxTokens}`,
        );
      } catch (error) {
        failure = isCompactError(error)
          ? error
          : new CompactError('summarizer_failed', `${inner.name}: ${messageOf(error)}`, { cause: error });
      }
      if (failure.code === 'summary_too_long' && lengthRetries < maxLengthRetries) {
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
        report('summarizer_refused', failure.message, `retry_${refusalStrategy}`, {
          attempt: call,
          strategy,
        });
        strategy = refusalStrategy;
        continue;
      }
      throw failure;
    }
  };

  return {
    name: inner.name,
    // First try and length retries, twice over when a refusal is retried with `brief`.
    maxDurationMs: timeoutMs * (maxLengthRetries + 1) * 2,
    inner,
    circuit(sessionId) {
      const state = circuits.get(sessionId);
      if (!state) return { failures: 0, open: false };
      const open = state.openUntil !== undefined && now() < state.openUntil;
      return {
        failures: state.failures,
        open,
        ...(state.openUntil === undefined ? {} : { openUntil: state.openUntil }),
      };
    },
    async summarize(request) {
      const state = circuits.get(request.sessionId);
      if (breaker && state?.openUntil !== undefined && now() < state.openUntil) {
        const message = `circuit open for session ${request.sessionId} after ${state.failures} consecutive failures; LLM skipped until ${new Date(state.openUntil).toISOString()}`;
        request.reportError?.({
          errorType: 'circuit_open',
          message,
          fallback: 'embedded',
          context: { summarizer: inner.name, failures: state.failures, retryAt: state.openUntil },
        });
        throw new CompactError('summarizer_failed', message);
      }
      try {
        const result = await attempt(request);
        circuits.delete(request.sessionId);
        return result;
      } catch (error) {
        // The caller's own abort says nothing about the summarizer's health.
        if (breaker && !isCompactError(error, 'aborted')) {
          const failures = (state?.failures ?? 0) + 1;
          const next: CircuitState = { failures };
          if (failures >= breaker.failureThreshold) next.openUntil = now() + breaker.cooldownMs;
          circuits.set(request.sessionId, next);
        }
        throw error;
      }
    },
  };
}
