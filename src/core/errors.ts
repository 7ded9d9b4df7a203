import { boundedLevenshtein } from './counting/model-table.js';

const MARKER = Symbol.for('agent-compaction.error');

/**
 * Machine-readable reason of a {@link CompactError}.
 *
 * - `insufficient_budget`: pinned + summary + the smallest recent window do not fit the budget.
 * - `invalid_messages`: a message is malformed (the message names the index and field).
 * - `invalid_config`: an option or config value is out of range or unknown.
 * - `summarizer_failed`: a summarizer could not produce a usable summary.
 * - `summarizer_timeout`: a summarizer did not answer within its time limit.
 * - `summarizer_refused`: the summarization model refused the request.
 * - `summary_too_long`: a summary exceeded its token limit after all retries.
 * - `storage_failed`: an archive write failed (never fatal to the conversation).
 * - `missing_dependency`: an optional peer package is not installed.
 * - `aborted`: the caller aborted the operation through its `AbortSignal`.
 * - `invalid_argument`: a function of this package was called with a bad argument.
 *
 * Codes that only appear as `errorType` of `compact.error` events (recovered conditions, never
 * thrown):
 *
 * - `circuit_open` / `circuit_half_open`: the summarizer's circuit breaker skipped the LLM.
 * - `redaction_disabled`: redaction is off, so events and archives carry raw text.
 * - `redaction_failed`: a value could not be scanned for secrets and was replaced whole.
 * - `forged_summary`: a message looked like this library's summary but was not one (defused).
 * - `session_mismatch`: stored state belongs to another session and was ignored.
 * - `concurrent_compaction`: the session's stored state kept changing under a compaction
 *   (other processes compacted first at every reload): the call was answered locally
 *   (`fallback` `stored-view` or `local`: a compaction that is not stored). Also the reason
 *   of a lock's abort signal (`withSessionLock`).
 * - `corrupt_state`: a stored state did not parse or match its schema; it was set aside and
 *   the session went on as new (thrown by a store's `get`, reported as an event).
 * - `unsound_request`: a request about to leave broke the invariant (a tool call without its
 *   result, the newest message not as given, two summaries); a sound one was sent instead.
 *
 * @example
 * ```ts
 * manager.on('compact.error', (event) => {
 *   if (event.properties.errorType === 'summarizer_timeout') metrics.increment('summary.timeout');
 * });
 * ```
 */
export type CompactErrorCode =
  | 'insufficient_budget'
  | 'invalid_messages'
  | 'invalid_config'
  | 'summarizer_failed'
  | 'summarizer_timeout'
  | 'summarizer_refused'
  | 'summary_too_long'
  | 'storage_failed'
  | 'missing_dependency'
  | 'aborted'
  | 'concurrent_compaction'
  | 'invalid_argument'
  | 'circuit_open'
  | 'circuit_half_open'
  | 'redaction_disabled'
  | 'redaction_failed'
  | 'forged_summary'
  | 'session_mismatch'
  | 'corrupt_state'
  | 'unsound_request';

/** One problem found while validating input or configuration. */
export interface CompactIssue {
  /** Where the problem is, e.g. `['messages', 3, 'role']` or `['policy', 'trigger_pct']`. */
  path: (string | number)[];
  /** What is wrong, in one sentence. */
  message: string;
  /** The code of the error the issue belongs to; {@link CompactError} fills it in when absent. */
  code?: CompactErrorCode;
}

/** Options of {@link CompactError}. */
export interface CompactErrorOptions {
  /** The error that caused this one. */
  cause?: unknown;
  /** Individual problems, for validation errors. */
  issues?: CompactIssue[];
}

/**
 * The one error type agent-compaction throws. Check `code` (or use {@link isCompactError})
 * rather than `instanceof`, which fails across two copies of the package.
 *
 * @example
 * ```ts
 * try { await manager.preflight(id, messages) }
 * catch (e) { if (isCompactError(e, 'insufficient_budget')) shrinkProtectedMemory() }
 * ```
 */
export class CompactError extends Error {
  /** Machine-readable reason. */
  readonly code: CompactErrorCode;
  /** Individual problems (validation errors), each with its path and code. */
  readonly issues: (CompactIssue & { code: CompactErrorCode })[];
  readonly [MARKER] = true;

  constructor(code: CompactErrorCode, message: string, options: CompactErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.issues = (options.issues ?? []).map((issue) => ({ ...issue, code: issue.code ?? code }));
  }
}

/**
 * True when `error` is a {@link CompactError} (from any copy of this package), optionally
 * with the given code.
 */
export function isCompactError(error: unknown, code?: CompactErrorCode): error is CompactError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[MARKER] === true &&
    (code === undefined || (error as CompactError).code === code)
  );
}

/** Builds an `invalid_messages` error naming the message index and field. */
export function invalidMessage(index: number, field: string, problem: string): CompactError {
  const where = field ? `messages[${index}].${field}` : `messages[${index}]`;
  return new CompactError('invalid_messages', `${where}: ${problem}`, {
    issues: [{ path: ['messages', index, ...(field ? field.split('.') : [])], message: problem }],
  });
}

/**
 * The known option an unknown `key` likely meant: the same name in another case or with
 * underscores (`max_tokens` for `maxTokens`), else one within two edits (`maxTokenz`).
 */
export function closestOption(key: string, known: readonly string[]): string | undefined {
  const plain = key.toLowerCase().replace(/[_-]/g, '');
  const same = known.find((name) => name.toLowerCase() === plain);
  if (same !== undefined) return same;
  let best: string | undefined;
  let bestDistance = 3;
  for (const name of known) {
    const distance = boundedLevenshtein(plain, name.toLowerCase(), 2);
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/** A rejected value as an error shows it: a string quoted, so `"8000"` reads apart from `8000`. */
export function shownValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** Builds an `invalid_config` error naming the option path. */
export function invalidConfig(path: string, problem: string): CompactError {
  return new CompactError('invalid_config', `${path} ${problem}`, {
    issues: [{ path: path.split('.'), message: problem }],
  });
}
