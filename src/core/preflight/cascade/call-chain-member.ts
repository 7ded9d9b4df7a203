/**
 * One member of the summarizer chain called: under its share of the time budget and the
 * caller's signal, its output checked (an LLM's is untrusted), redacted and within its limit.
 */

import type { TokenCounter } from '../../counting/token-counter.js';
import { CompactError } from '../../errors.js';
import type { CompactEventProperties } from '../../events/events.js';
import type { CompactMessage } from '../../messages/message.js';
import type { Redactor } from '../../redaction/redactor.js';
import { EmbeddedSummarizer } from '../../summary/embedded-summarizer.js';
import type {
  SummarizeRequest,
  SummarizeResult,
  Summarizer,
  SummarizerCircuitReport,
  SummarizerErrorReport,
} from '../../summary/summarizer.js';
import {
  describeSummaryRejection,
  lostKeptLines,
  SummaryRejectedError,
  type SummaryRejection,
  summarySourceText,
} from '../../summary/summary-guard.js';
import { TimeSlice } from '../../time-slice.js';
import { summaryBodyFrom } from './summary-output.js';

/** Emits a summarizer event (the manager adds ids, times and redaction). */
export type SummarizeEmit = <N extends 'compact.summary_created' | 'compact.error' | 'compact.circuit'>(
  name: N,
  properties: CompactEventProperties[N],
  start: number,
) => void;

/** What summarizing needs from the manager. */
export interface SummarizeContext {
  /** The configured summarizer, then its fallbacks (the embedded one). */
  readonly chain: readonly Summarizer[];
  /**
   * The total time budget of one summarization: the chain's members share it, the last one
   * (the embedded fallback) keeps a reserve of a tenth of it (at most 3 s), and gets at least 1 s.
   */
  readonly timeoutMs: number;
  readonly counter: TokenCounter;
  /** Redacts the messages and the previous summary before they reach the summarizer. */
  readonly redact: Redactor | undefined;
  readonly emit: SummarizeEmit;
}

/** The summary written, and by whom. */
export interface SummarizeOutcome {
  text: string;
  summarizer: string;
  /** The fallback that wrote it, when the configured summarizer failed. */
  fallback?: string;
}

/** One run of the fallback chain: what every member is called with. */
export interface ChainRun {
  context: SummarizeContext;
  request: Omit<SummarizeRequest, 'countTokens' | 'reportError'>;
  input: Omit<SummarizeRequest, 'countTokens' | 'reportError'>;
  version: number;
  checkOutput: (text: string, strategy: string, source?: string) => string | undefined;
  fillTokens: number | undefined;
  deadline: number;
  hooks: Pick<SummarizeRequest, 'countTokens' | 'reportError' | 'reportCircuit'>;
  /** The transcript an LLM's output is checked against, made once on first need. */
  source?: string;
}

/** How a summarizer counts tokens and reports its errors and circuit changes as events. */
export function summarizerHooks(context: SummarizeContext): ChainRun['hooks'] {
  const { counter, emit } = context;
  return {
    countTokens: (text: string) => counter.countText(text),
    reportError: (report: SummarizerErrorReport) =>
      emit(
        'compact.error',
        {
          errorType: report.errorType,
          message: report.message,
          fallback: report.fallback,
          ...(report.context ? { context: report.context } : {}),
        },
        Date.now(),
      ),
    reportCircuit: (report: SummarizerCircuitReport) => emit('compact.circuit', report, Date.now()),
  };
}

/** Chain member `attempt`'s summary body, checked and within its limit, announced by an event. */
export async function callChainMember(
  run: ChainRun,
  attempt: number,
  start: number,
): Promise<SummarizeOutcome> {
  const { context, request, input, hooks } = run;
  const summarizer = context.chain[attempt]!;
  const limit = memberLimit(context, attempt, run.deadline);
  if (limit <= 0) {
    throw new CompactError(
      'summarizer_timeout',
      `the summarization time budget of ${context.timeoutMs} ms was spent`,
    );
  }
  // The built-in summarizer may fill the room under the target (issue 35); an LLM
  // summarizer keeps the policy's limit (its own context and cost).
  const embedded = summarizer instanceof EmbeddedSummarizer;
  const maxTokens =
    embedded && run.fillTokens !== undefined
      ? Math.max(request.maxTokens, run.fillTokens)
      : request.maxTokens;
  const result = await callWithTimeout(summarizer, { ...input, maxTokens, ...hooks }, limit);
  const raw = typeof result?.text === 'string' ? result.text.trim() : '';
  const text = acceptedBody(run, embedded, raw);
  const tokens = hooks.countTokens(text);
  if (tokens > maxTokens) {
    throw new CompactError(
      'summary_too_long',
      `the summary has ${tokens} tokens, over the limit of ${maxTokens}`,
    );
  }
  const inputTokens = await countInSlices(input.messages, context.counter);
  context.emit(
    'compact.summary_created',
    {
      strategy: String(request.strategy),
      summarizer: result.summarizer ?? summarizer.name,
      inputMessages: input.messages.length,
      inputTokens,
      summaryTokens: tokens,
      compressionRatio: inputTokens > 0 ? tokens / inputTokens : 1,
      version: run.version,
      ...(result.model ? { model: result.model } : {}),
      ...(result.usage ? { usage: result.usage } : {}),
      latencyMs: Date.now() - start,
      summary: text,
    },
    start,
  );
  return {
    text,
    summarizer: result.summarizer ?? summarizer.name,
    ...(attempt > 0 ? { fallback: summarizer.name } : {}),
  };
}

/**
 * The tokens of `messages` (the counter answers the folded ones from the view's counts), the
 * loop given a turn whenever the slice has run its time: 16k lookups after the summary's
 * checks and before its event's redaction were a block of their own (issue 47).
 */
async function countInSlices(messages: readonly CompactMessage[], counter: TokenCounter): Promise<number> {
  const slice = new TimeSlice();
  let sum = 0;
  for (let index = 0; index < messages.length; index++) {
    sum += counter.countMessage(messages[index]!);
    if (index % 64 === 63 && slice.due()) await slice.pause();
  }
  return sum;
}

/** The summary body of `raw` once checked (or the typed rejection), redacted. */
function acceptedBody(run: ChainRun, embedded: boolean, raw: string): string {
  const strategy = String(run.request.strategy);
  // The built-in summarizer is extractive by design (it quotes the transcript): only its
  // emptiness is checked; every other summarizer's output is untrusted.
  if (embedded) {
    rejectUnusable(raw === '' ? 'empty' : undefined, raw, strategy);
  } else {
    run.source ??= summarySourceText(run.input.messages, run.input.previousSummary);
    rejectUnusable(run.checkOutput(raw, strategy, run.source), raw, strategy);
    // The user's task and instructions the previous summary held must still be there.
    if (lostKeptLines(raw, run.input.keep).length > 0) rejectUnusable('lost_instructions', raw, strategy);
  }
  const redact = run.context.redact;
  return summaryBodyFrom(redact ? redact(raw) : raw);
}

/** Throws the rejection `checkOutput` returned for `raw` (a reason such as `refusal`), if any. */
function rejectUnusable(problem: string | undefined, raw: string, strategy: string): void {
  if (!problem) return;
  const reason = problem as SummaryRejection;
  throw new SummaryRejectedError(reason, describeSummaryRejection(reason, raw, strategy));
}

/**
 * The least time the last member of the chain (the embedded fallback) gets, whatever the budget:
 * it is local and bounded by its input, and stopping it leaves only pruning (on a slow machine a
 * 5 ms reserve of a 50 ms budget was not enough for sixteen short messages).
 */
const LAST_MEMBER_MIN_MS = 1_000;

/** The time limit of chain member `attempt` under the shared budget, or 0 when it is spent. */
function memberLimit(context: SummarizeContext, attempt: number, deadline: number): number {
  const reserve = Math.min(3_000, Math.floor(context.timeoutMs / 10));
  const left = deadline - Date.now();
  return attempt === context.chain.length - 1
    ? Math.max(left, reserve, LAST_MEMBER_MIN_MS)
    : Math.max(0, left - reserve);
}

async function callWithTimeout(
  summarizer: Summarizer,
  request: SummarizeRequest,
  timeoutMs: number,
): Promise<SummarizeResult> {
  const controller = new AbortController();
  const signal = request.signal ? AbortSignal.any([controller.signal, request.signal]) : controller.signal;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new CompactError(
        'summarizer_timeout',
        `the summarizer did not answer within ${timeoutMs} ms`,
      );
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  // Listened to on this call's own signal, never the caller's: one signal shared by many
  // concurrent calls would otherwise collect a listener per call (Node warns past 10).
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    if (request.signal?.aborted) reject(request.signal.reason);
    onAbort = () => {
      if (request.signal?.aborted) reject(request.signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([summarizer.summarize({ ...request, signal }), timeout, aborted]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
