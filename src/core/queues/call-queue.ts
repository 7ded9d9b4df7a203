/**
 * Compactions of one session run one after the other, in call order. A caller may give up
 * while waiting for its turn: its signal rejects the wait, and the queued run stops at its
 * first abort check.
 */
import { CompactError } from '../errors.js';

/** One queue per key (a session, or a session and agent); a key is forgotten when idle. */
export class CallQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every earlier task of `key` settled; `signal` aborts the wait. */
  async enqueue<T>(key: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const run = previous.then(task, task);
    this.#tails.set(key, run);
    const release = () => {
      if (this.#tails.get(key) === run) this.#tails.delete(key);
    };
    void run.then(release, release);
    if (!signal) return run;
    throwIfAborted(signal);
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(new CompactError('aborted', 'compaction aborted by the caller', { cause: signal.reason }));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([run, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort!);
    }
  }
}

/** Throws `CompactError('aborted')` when the caller's signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new CompactError('aborted', 'compaction aborted by the caller', { cause: signal.reason });
}
