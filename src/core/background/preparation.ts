/**
 * One background preparation of a session (see background-preparation.ts): its record, the
 * in-process summarizing under the shared store's lock, and its abort.
 */
import { CompactError } from '../errors.js';
import type { BufferedEvent } from '../preflight/cascade/prepared-summary.js';
import type { SummarizeOutcome } from '../preflight/cascade/summarize-remainder.js';
import type { SessionView, ViewEntry } from '../preflight/view/session-view.js';
import { preparationFold } from '../queues/preparation-queue.js';
import type { SharedStore } from './background-status.js';
import { baseChainOf, resumesStored } from './branch-prepared.js';
import { coversPrefix, preparedKey, publishedVersion, publishPrepared } from './shared-preparation.js';

/** A preparation of a session's summary, for the summary version it extends. */
export interface Preparation {
  readonly baseVersion: number;
  /** The anchor chain of the state it extends (`''`: none): with the version, its branch. */
  readonly baseChain: string;
  /** Its fold's tag (`preparationFold`): names its queue job and its worker's claim. */
  readonly fold: string;
  readonly foldedIds: readonly string[];
  /** Content hashes of the folded messages (an edit that keeps an id changes the hash). */
  readonly foldedHashes: readonly string[];
  readonly controller: AbortController;
  readonly events: BufferedEvent[];
  readonly done: Promise<void>;
  settled: boolean;
  outcome: SummarizeOutcome | undefined;
  /** Starts the deferred work at once (shutdown), when it has not started. */
  kick: (() => void) | undefined;
  /** When the queue took its job (epoch ms), with a queue. */
  queuedAt: number | undefined;
  /** Its job is to be withdrawn (nothing will use it): at once if queued, else once the add lands. */
  unwanted: boolean;
  immediate: ReturnType<typeof setImmediate> | undefined;
}

/** True when `preparation` extends the view's state and folds a prefix of its messages. */
export function preparationFits(preparation: Preparation, view: SessionView): boolean {
  return (
    preparation.baseVersion === view.version &&
    preparation.baseChain === baseChainOf(view) &&
    resumesStored(view) &&
    coversPrefix(preparation.foldedIds, preparation.foldedHashes, view)
  );
}

/**
 * A preparation of `folded` extending `view`'s state, its `work` started on a later turn of the
 * event loop (off the critical path: the caller's model call goes first) unless aborted
 * before; a failed work leaves no outcome; `onSettled` is called when it ends.
 */
export function startPreparation(
  view: SessionView,
  folded: readonly ViewEntry[],
  work: (preparation: Preparation) => Promise<void>,
  onSettled: (preparation: Preparation) => void,
): Preparation {
  const controller = new AbortController();
  let kick: () => void = () => {};
  const begun = new Promise<void>((resolve) => {
    kick = resolve;
  });
  const foldedIds = folded.map((entry) => entry.item.id);
  const foldedHashes = folded.map((entry) => entry.item.entry.hash);
  const baseChain = baseChainOf(view);
  const preparation: Preparation = {
    baseVersion: view.version,
    baseChain,
    fold: preparationFold(view.version, baseChain, foldedIds, foldedHashes),
    foldedIds,
    foldedHashes,
    controller,
    events: [],
    settled: false,
    outcome: undefined,
    immediate: undefined,
    queuedAt: undefined,
    unwanted: false,
    kick,
    done: begun
      .then(async () => {
        preparation.kick = undefined;
        if (controller.signal.aborted) return;
        await work(preparation);
      })
      .catch(() => {
        preparation.outcome = undefined;
      })
      .finally(() => {
        preparation.settled = true;
        onSettled(preparation);
      }),
  };
  preparation.immediate = setImmediate(kick);
  return preparation;
}

/**
 * Summarizes `preparation` in this process (`run`), with a shared store under the session's
 * preparation lock, publishing the summary there; `onSummarize` is called when `run` starts.
 */
export async function summarizeUnderLock(
  shared: SharedStore | undefined,
  key: string,
  preparation: Preparation,
  run: () => Promise<SummarizeOutcome | undefined>,
  onSummarize: () => void,
): Promise<void> {
  const lock = shared
    ? await shared.store.acquireLock(preparedKey(key), shared.lockTtlMs).catch(() => undefined)
    : undefined;
  // Another process prepares this session: its summary is read from the store at the trigger.
  if (shared && !lock) return;
  try {
    // The lock is the session's, not the version's: a process that crosses the threshold
    // after another one published this version's summary (and released the lock) would
    // otherwise summarize it again.
    if (shared && (await publishedVersion(shared.store, key)) === preparation.baseVersion) return;
    onSummarize();
    preparation.outcome = await run();
    if (shared && preparation.outcome && !preparation.controller.signal.aborted) {
      const published = await publishPrepared(
        shared.store,
        key,
        // In the session's one slot, as before (its lock is the session's): no branch named.
        {
          baseVersion: preparation.baseVersion,
          foldedIds: preparation.foldedIds,
          foldedHashes: preparation.foldedHashes,
          outcome: preparation.outcome,
        },
        shared.signing,
      );
      // Another process published this version first: its text stands (read at the trigger).
      if (published === 'taken') preparation.outcome = undefined;
    }
  } finally {
    await lock?.release().catch(() => false);
  }
}

/** Aborts `preparation`'s work, starting it at once if it waited (so its `done` settles). */
export function abortPreparation(preparation: Preparation): void {
  preparation.controller.abort(new CompactError('aborted', 'the background preparation was discarded'));
  if (preparation.immediate) clearImmediate(preparation.immediate);
  preparation.kick?.();
}
