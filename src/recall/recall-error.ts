/**
 * Why a recall was refused, as the model sees it: each code comes with one sentence saying
 * what to pass instead.
 *
 * - `invalid_input`: the tool input is not an object, or gives neither (or both of) `ref` and `query`, or a field has the wrong type.
 * - `invalid_ref`: the reference does not have the shape of one (paths, `..`, absolute names are refused before any read).
 * - `unknown_ref`: no archived text of this session has that reference.
 * - `page_too_large`: `page_chars` is over the limit.
 * - `page_out_of_range`: `page` is below 1 or past the last page.
 * - `recall_unavailable`: the archive keeps no originals (its storage has no artifact methods).
 * - `archive_unreadable`: the storage failed while reading, or the text stored under the ref is corrupt or truncated (the message then names the ref).
 */
export type RecallErrorCode =
  | 'invalid_input'
  | 'invalid_ref'
  | 'unknown_ref'
  | 'page_too_large'
  | 'page_out_of_range'
  | 'recall_unavailable'
  | 'archive_unreadable';

/**
 * A recall the tool refuses. Its message is written for the model (it never names storage
 * paths or other sessions); tool definitions turn it into an error result, not an exception.
 */
export class RecallError extends Error {
  /** Machine-readable reason. */
  readonly code: RecallErrorCode;
  /** The input field at fault, when there is one. */
  readonly field: string | undefined;

  constructor(code: RecallErrorCode, message: string, options: { field?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RecallError';
    this.code = code;
    this.field = options.field;
  }
}

/** True when `error` is a {@link RecallError} (by name and code, so it works across copies of the package). */
export function isRecallError(error: unknown, code?: RecallErrorCode): error is RecallError {
  return (
    error instanceof Error &&
    error.name === 'RecallError' &&
    typeof (error as RecallError).code === 'string' &&
    (code === undefined || (error as RecallError).code === code)
  );
}
