import { describeCause } from '../core/describe-cause.js';
import { CompactError, isCompactError } from '../core/errors.js';

/**
 * Throws once `signal` is aborted (the manager gave the write up, see `ArchiveWriteOptions`):
 * its reason when that is a `storage_failed` error, else `storage_failed` naming `what` with the
 * reason as cause. Nothing once it is not.
 */
export function assertWriteNotAborted(signal: AbortSignal | undefined, what: string): void {
  if (!signal?.aborted) return;
  const reason: unknown = signal.reason;
  if (isCompactError(reason, 'storage_failed')) throw reason;
  throw new CompactError('storage_failed', `${what}: the write was aborted (${describeCause(reason)})`, {
    cause: reason,
  });
}
