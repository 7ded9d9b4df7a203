/**
 * The pieces of a background preparation that do not hold its state: what it folds, what the
 * summarizer sees, the job a queue gets, and the wait a trigger may do on it.
 */

import { CompactError } from '../errors.js';
import type { MessageCodec } from '../messages/formats/message-codec.js';
import type { CompactMessage } from '../messages/message.js';
import { toCompactMessage } from '../messages/message-index.js';
import type { CompactPolicy } from '../policy.js';
import { buildUnits, policySuffixStart } from '../preflight/cascade/build-units.js';
import type { SummarizeContext } from '../preflight/cascade/summarize-remainder.js';
import type { SessionView, ViewEntry } from '../preflight/view/session-view.js';
import type { PreparationJob } from '../queues/preparation-queue.js';
import { cutOuterSeams } from '../redaction/message-seams.js';
import { memoizeRedactor, type Redactor } from '../redaction/redactor.js';
import { baseChainOf } from './branch-prepared.js';
import { preparationJob } from './preparation-job.js';

/** What starting a preparation needs. */
export interface PreparationRequest {
  readonly sessionId: string;
  readonly view: SessionView;
  readonly policy: Readonly<CompactPolicy>;
  readonly summarize: Omit<SummarizeContext, 'emit'>;
  readonly codec: MessageCodec;
  readonly agent?: string;
  /** The request shows an AI assistant on the other side (see `SummarizeRequest.withAssistant`). */
  readonly withAssistant?: boolean;
  /**
   * Tokens to fold at least (oldest first): what the request will have to shed at the trigger
   * to reach the target, plus the summary's room. Without it, all before the policy window.
   */
  readonly foldAtLeast?: number;
  /** When the session's trigger is expected (epoch ms), for a queued job's deadline. */
  readonly deadline?: number;
  /** When the session's trigger is expected at its pace, without the deadline's margin (epoch ms). */
  readonly dueAt?: number;
}

/** The unpinned entries before the policy's verbatim window (what a preparation folds). */
export function planPreparation(
  view: SessionView,
  policy: Readonly<CompactPolicy>,
  foldAtLeast = Number.POSITIVE_INFINITY,
): ViewEntry[] {
  const unpinned = view.entries.filter((entry) => !entry.pinned);
  const units = buildUnits(unpinned);
  if (units.length === 0) return [];
  const policyStart = policySuffixStart(units, policy.keepRecentTurns, policy.keepToolIoPairs);
  // The oldest units, until they free what the trigger will need to reach the target: the
  // rest stays verbatim, as deep as a synchronous compaction goes.
  let start = 0;
  let folded = 0;
  while (start < policyStart && folded < foldAtLeast) folded += units[start++]!.tokens;
  return start === 0 ? [] : unpinned.slice(0, units[start]?.start ?? unpinned.length);
}

/** The message the summarizer sees for an entry (its rewrite when it has one). */
export function summarizerMessage(entry: ViewEntry, codec: MessageCodec): CompactMessage {
  if (!entry.rewrite) return toCompactMessage(entry.item);
  return { ...codec.parse(entry.wire, entry.item.index), id: entry.item.id, index: entry.item.index };
}

/**
 * The messages the summarizer sees for `folded` (entries of the request's view): where a secret
 * crosses into a message the preparation does not fold (a pinned turn before, the first kept
 * message after), the folded side is cut across that seam, as the foreground's slice is.
 */
export function preparationMessages(
  folded: readonly ViewEntry[],
  request: PreparationRequest,
): CompactMessage[] {
  const message = (entry: ViewEntry) => summarizerMessage(entry, request.codec);
  const messages = folded.map(message);
  const redact = request.summarize.redact;
  if (redact) cutOuterSeams(request.view.entries, folded, messages, message, redact);
  return messages;
}

/**
 * The redactor, remembering its answers for one preparation: a message's text is met twice
 * (its parsed text and its raw object), and is scanned once.
 */
export function memoized(redact: Redactor | undefined): Redactor | undefined {
  return redact ? memoizeRedactor(redact) : undefined;
}

/** Rejects with `CompactError('aborted')` when `signal` fires first; `work` is not cancelled. */
export function untilAborted(work: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return work;
  if (signal.aborted)
    return Promise.reject(
      new CompactError('aborted', 'compaction aborted by the caller', { cause: signal.reason }),
    );
  return new Promise((resolve, reject) => {
    const onAbort = () =>
      reject(new CompactError('aborted', 'compaction aborted by the caller', { cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

/** A previous summary without its trailing archive line (the new summary gets a fresh one). */
export function withoutArchiveLine(summary: string): string {
  return summary.replace(/\n?Archived originals: recall ref [^\n]*$/, '');
}

/** The job of a preparation handed to the queue (once per session and version across processes). */
export function queueJob(
  key: string,
  folded: readonly ViewEntry[],
  request: PreparationRequest,
  fold: string,
): Promise<PreparationJob> {
  const { view, policy } = request;
  return preparationJob(
    {
      key,
      sessionId: request.sessionId,
      baseVersion: view.version,
      // The branch it serves: the state it extends and what it folds (branch-prepared.ts).
      baseChain: baseChainOf(view),
      fold,
      strategy: String(policy.strategy),
      maxTokens: policy.maxSummaryTokens,
      ...(request.agent ? { agent: request.agent } : {}),
      ...(request.withAssistant ? { withAssistant: true } : {}),
      ...(request.deadline !== undefined ? { deadline: request.deadline } : {}),
      ...(request.dueAt !== undefined ? { dueAt: request.dueAt } : {}),
    },
    folded,
    preparationMessages(folded, request),
    view.previousSummary ? withoutArchiveLine(view.previousSummary) : undefined,
    request.summarize.redact,
  );
}
