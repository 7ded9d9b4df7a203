/**
 * Cascade level c: summarize. The units before the verbatim suffix, with the previous
 * summary, are folded into the next version of the rolling summary. The summarizer runs
 * under a time limit and the caller's signal; a failure falls back to the embedded
 * summarizer, then to pruning only (the previous summary kept); each step is a
 * `compact.error` event and a failure is never stored as summary text.
 */

import type { TokenCounter } from '../../counting/token-counter.js';
import { CompactError, isCompactError } from '../../errors.js';
import type { CompactEventProperties } from '../../events/events.js';
import type { CompactMessage } from '../../messages/message.js';
import { memoizeRedactor, type Redactor, redactDeep } from '../../redaction/redactor.js';
import { INSTRUCTIONS_TITLE, splitUserSections, TASK_TITLE } from '../../summary/embedded/user-sections.js';
import { EmbeddedSummarizer } from '../../summary/embedded-summarizer.js';
import type {
  SentPrefix,
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
  summaryRejectionOf,
  summarySourceText,
} from '../../summary/summary-guard.js';
import { defuseSummaryMarkup } from '../../summary/summary-markup.js';
import { mapSliced, TimeSlice } from '../../time-slice.js';
import type { ViewEntry } from '../session-view.js';
import { summaryBodyFrom } from '../summary-output.js';

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

/**
 * The counter, answering `countMessage` for the folded messages from the counts the view
 * already has (the summarizer's input size, for its event) instead of tokenizing them again:
 * no message is counted twice in one preflight.
 */
export function withKnownCounts(counter: TokenCounter, folded: readonly ViewEntry[]): TokenCounter {
  const known = new Map(folded.map((entry) => [entry.item.id, entry.tokens]));
  return {
    name: counter.name,
    exact: counter.exact,
    requestOverhead: counter.requestOverhead,
    countText: (text) => counter.countText(text),
    countMessage: (message) => known.get(message.id) ?? counter.countMessage(message),
    countTools: (tools) => counter.countTools(tools),
  };
}

/** A copy of a message with its text, tool arguments and tool results redacted. */
export function redactMessage(message: CompactMessage, redact: Redactor): CompactMessage {
  return {
    ...message,
    raw: redactDeep(message.raw, redact),
    text: redact(message.text),
    toolCalls: message.toolCalls.map((call) => ({ ...call, arguments: redact(call.arguments) })),
    toolResults: message.toolResults.map((result) => ({ ...result, output: redact(result.output) })),
  };
}

/**
 * Redacts a summarizer request's messages, each distinct text scanned once, giving the event
 * loop a turn every few milliseconds (a long history takes tens of milliseconds to scan).
 */
export async function redactMessages(
  messages: readonly CompactMessage[],
  redact: Redactor,
): Promise<CompactMessage[]> {
  const once = memoizeRedactor(redact);
  return mapSliced(messages, (message) => redactMessage(message, once));
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

/**
 * What the summarizers see: the messages and the previous summary redacted; the messages'
 * library tags (a forged `<COMPACT-SUMMARY v9>` in a user message, `</history>`, look-alikes
 * included) defused; a previous summary read back is data too, its tags defused as well.
 */
/**
 * The sent prefix, redacted (never defused: its bytes must stay the conversation's to be read
 * from the cache; the summary message's tag is genuine, and a summarizer falls back to the
 * transcript when any other message carries the library's markup).
 */
async function redactSentPrefix(prefix: SentPrefix, redact: Redactor): Promise<SentPrefix> {
  const once = memoizeRedactor(redact);
  const messages: unknown[] = [];
  const slice = new TimeSlice();
  for (const message of prefix.messages) {
    messages.push(redactDeep(message, once));
    if (slice.due()) await slice.pause();
  }
  return { ...prefix, messages };
}

async function summarizerInput<
  R extends Pick<SummarizeRequest, 'messages' | 'previousSummary' | 'keep' | 'sentPrefix' | 'maxTokens'>,
>(request: R, redact: Redactor | undefined): Promise<R> {
  const previous = request.previousSummary ? summaryBodyFrom(request.previousSummary) : undefined;
  const clean: Redactor = redact ? (text) => defuseSummaryMarkup(redact(text)) : defuseSummaryMarkup;
  const redacted = previous && redact ? redact(previous) : previous;
  // What the user asked, held by the previous summary, is handed over as content to keep,
  // within half of the summary's limit (the rest stays in the previous summary as material).
  const keep = keptSections(redacted, request.maxTokens);
  return {
    ...request,
    messages: await redactMessages(request.messages, clean),
    ...(request.sentPrefix && redact
      ? { sentPrefix: await redactSentPrefix(request.sentPrefix, redact) }
      : {}),
    ...(redacted ? { previousSummary: redacted } : {}),
    ...(keep ? { keep } : {}),
  };
}

/** Characters per token assumed when sizing the kept sections (a safe overestimate of tokens). */
const CHARS_PER_TOKEN = 3;

/**
 * A later instruction on the same thing supersedes an earlier one: lines whose first words
 * (the subject: "use", "never call", "deploy to") match keep only their newest form.
 */
function supersede(lines: readonly string[]): string[] {
  const subject = (line: string) =>
    line
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s]/gu, ' ')
      .split(/\s+/)
      .filter(Boolean)
      .slice(0, 3)
      .join(' ');
  const newest = new Map<string, number>();
  lines.forEach((line, k) => {
    newest.set(subject(line), k);
  });
  return lines.filter((line, k) => newest.get(subject(line)) === k);
}

/**
 * The `## Task` and `## User instructions` sections of a previous summary body, if any, within
 * half of `maxTokens` (issue 34): superseded instructions go first, then the oldest; what does
 * not fit is not demanded of the summarizer (it still reads it in the previous summary).
 */
export function keptSections(
  previous: string | undefined,
  maxTokens = Number.POSITIVE_INFINITY,
): string | undefined {
  const { task, instructions } = splitUserSections(previous);
  let budget = Math.floor((maxTokens / 2) * CHARS_PER_TOKEN);
  const taskLines: string[] = [];
  for (const line of task) {
    if (line.length + 3 > budget) break;
    taskLines.push(line);
    budget -= line.length + 3;
  }
  const rules: string[] = [];
  const size = instructions.reduce((sum, line) => sum + line.length + 3, 0);
  // Only past the budget does a later instruction on the same subject replace an earlier one.
  const candidates = size > budget ? supersede(instructions) : instructions;
  for (let k = candidates.length - 1; k >= 0; k--) {
    const line = candidates[k]!;
    if (line.length + 3 > budget) break;
    rules.unshift(line);
    budget -= line.length + 3;
  }
  const parts: string[] = [];
  if (taskLines.length > 0) parts.push(`## ${TASK_TITLE}\n${taskLines.map((l) => `- ${l}`).join('\n')}`);
  if (rules.length > 0) parts.push(`## ${INSTRUCTIONS_TITLE}\n${rules.map((l) => `- ${l}`).join('\n')}`);
  return parts.length > 0 ? parts.join('\n') : undefined;
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

/**
 * Writes the next summary body with the fallback chain, or returns `undefined` when every
 * summarizer failed (the caller then prunes only).
 */
export async function summarizeWithFallback(
  context: SummarizeContext,
  request: Omit<SummarizeRequest, 'countTokens' | 'reportError'>,
  version: number,
  checkOutput: (text: string, strategy: string, source?: string) => string | undefined,
  fillTokens?: number,
): Promise<SummarizeOutcome | undefined> {
  const { counter, emit, redact } = context;
  const deadline = Date.now() + context.timeoutMs;
  const countTokens = (text: string) => counter.countText(text);
  const reportError = (report: SummarizerErrorReport) =>
    emit(
      'compact.error',
      {
        errorType: report.errorType,
        message: report.message,
        fallback: report.fallback,
        ...(report.context ? { context: report.context } : {}),
      },
      Date.now(),
    );
  const reportCircuit = (report: SummarizerCircuitReport) => emit('compact.circuit', report, Date.now());
  // The conversation's sent prefix is redacted and handed over only to a summarizer that reads it.
  const wanted = context.chain.some((summarizer) => summarizer.readsSentPrefix === true);
  const { sentPrefix, ...rest } = request;
  const input = await summarizerInput(wanted && sentPrefix ? { ...rest, sentPrefix } : rest, redact);
  let source: string | undefined;
  for (let attempt = 0; attempt < context.chain.length; attempt++) {
    const summarizer = context.chain[attempt]!;
    const start = Date.now();
    const next = context.chain[attempt + 1]?.name ?? 'pruning-only';
    try {
      const limit = memberLimit(context, attempt, deadline);
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
        embedded && fillTokens !== undefined ? Math.max(request.maxTokens, fillTokens) : request.maxTokens;
      const result = await callWithTimeout(
        summarizer,
        { ...input, maxTokens, countTokens, reportError, reportCircuit },
        limit,
      );
      const raw = typeof result?.text === 'string' ? result.text.trim() : '';
      // The built-in summarizer is extractive by design (it quotes the transcript): only its
      // emptiness is checked; every other summarizer's output is untrusted.
      if (embedded) {
        rejectUnusable(raw === '' ? 'empty' : undefined, raw, String(request.strategy));
      } else {
        source ??= summarySourceText(input.messages, input.previousSummary);
        rejectUnusable(checkOutput(raw, String(request.strategy), source), raw, String(request.strategy));
        // The user's task and instructions the previous summary held must still be there.
        if (lostKeptLines(raw, input.keep).length > 0)
          rejectUnusable('lost_instructions', raw, String(request.strategy));
      }
      const text = summaryBodyFrom(redact ? redact(raw) : raw);
      const tokens = countTokens(text);
      if (tokens > maxTokens) {
        throw new CompactError(
          'summary_too_long',
          `the summary has ${tokens} tokens, over the limit of ${maxTokens}`,
        );
      }
      const inputTokens = input.messages.reduce((sum, m) => sum + counter.countMessage(m), 0);
      emit(
        'compact.summary_created',
        {
          strategy: String(request.strategy),
          summarizer: result.summarizer ?? summarizer.name,
          inputMessages: input.messages.length,
          inputTokens,
          summaryTokens: tokens,
          compressionRatio: inputTokens > 0 ? tokens / inputTokens : 1,
          version,
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
    } catch (error) {
      if (request.signal?.aborted)
        throw new CompactError('aborted', 'compaction aborted by the caller', { cause: error });
      emit(
        'compact.error',
        {
          errorType: isCompactError(error) ? error.code : 'summarizer_failed',
          message: error instanceof Error ? error.message : String(error),
          fallback: next,
          context: {
            summarizer: summarizer.name,
            ...(summaryRejectionOf(error) ? { reason: summaryRejectionOf(error) } : {}),
          },
        },
        start,
      );
    }
  }
  return undefined;
}
