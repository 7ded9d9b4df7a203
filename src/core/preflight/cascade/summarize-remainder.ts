/**
 * Cascade level c: summarize. The units before the verbatim suffix, with the previous
 * summary, are folded into the next version of the rolling summary. The summarizer runs
 * under a time limit and the caller's signal; a failure falls back to the embedded
 * summarizer, then to pruning only (the previous summary kept); each step is a
 * `compact.error` event and a failure is never stored as summary text.
 */

import type { TokenCounter } from '../../counting/token-counter.js';
import { CompactError, isCompactError } from '../../errors.js';
import type { CompactMessage } from '../../messages/message.js';
import { redactMessageSeams, redactWireSeams } from '../../redaction/message-seams.js';
import { memoizeRedactor, type Redactor, redactDeep } from '../../redaction/redactor.js';
import { blockSeams, crossingSeams, redactJoined, type Seam } from '../../redaction/split-secrets.js';
import { ShardedMap } from '../../sharded-map.js';
import { INSTRUCTIONS_TITLE, splitUserSections, TASK_TITLE } from '../../summary/embedded/user-sections.js';
import type { SentPrefix, SummarizeRequest } from '../../summary/summarizer.js';
import { summaryRejectionOf } from '../../summary/summary-guard.js';
import { defuseSummaryMarkup } from '../../summary/summary-markup.js';
import { mapSliced, TimeSlice } from '../../time-slice.js';
import type { ViewEntry } from '../view/session-view.js';
import {
  type ChainRun,
  callChainMember,
  type SummarizeContext,
  type SummarizeOutcome,
  summarizerHooks,
} from './call-chain-member.js';
import { summaryBodyFrom } from './summary-output.js';

export type { SummarizeContext, SummarizeEmit, SummarizeOutcome } from './call-chain-member.js';

/**
 * The counter, answering `countMessage` for the folded messages from the counts the view
 * already has (the summarizer's input size, for its event) instead of tokenizing them again:
 * no message is counted twice in one preflight.
 */
export function withKnownCounts(
  counter: TokenCounter,
  folded: readonly ViewEntry[] | ReadonlyMap<string, number> | ShardedMap<number>,
): TokenCounter {
  // A map of the counts by message id when the caller built it (in slices, over a long history).
  const known: { get(id: string): number | undefined } =
    folded instanceof Map || folded instanceof ShardedMap
      ? folded
      : new Map((folded as readonly ViewEntry[]).map((entry) => [entry.item.id, entry.tokens]));
  return {
    name: counter.name,
    exact: counter.exact,
    requestOverhead: counter.requestOverhead,
    countText: (text) => counter.countText(text),
    countMessage: (message) => known.get(message.id) ?? counter.countMessage(message),
    countTools: (tools) => counter.countTools(tools),
  };
}

/**
 * A copy of a message with its text, tool calls and tool results redacted: arguments and
 * outputs, and the names and ids the transcript prints beside them (`-> call name(...) [id]`),
 * which are the caller's strings too.
 */
export function redactMessage(message: CompactMessage, redact: Redactor): CompactMessage {
  // A secret split over two text blocks is redacted across their seam in the joined texts too.
  const seams = crossingSeams(blockSeams(message.raw), redact);
  const ofResult = resultSeams(seams);
  return {
    ...message,
    raw: redactDeep(message.raw, redact),
    text: redactJoined(
      message.text,
      seams.filter((seam) => seam.group === 0),
      redact,
    ),
    toolCalls: message.toolCalls.map((call) => ({
      ...call,
      id: redact(call.id),
      name: redact(call.name),
      arguments: redact(call.arguments),
    })),
    toolResults: message.toolResults.map((result) => ({
      ...result,
      callId: redact(result.callId),
      output: redactJoined(result.output, ofResult(result.callId), redact),
    })),
  };
}

/**
 * The crossing seams of a tool result's output, by call id: its `tool_result` block's
 * (Anthropic), else the message's own blocks (a Chat `tool` message's content is its output).
 */
function resultSeams(seams: readonly Seam[]): (callId: string) => readonly Seam[] {
  if (seams.length === 0 || !seams.some((seam) => seam.group > 0)) return () => seams;
  const owned = new Map<string, Seam[]>();
  for (const seam of seams) {
    if (seam.owner === undefined) continue;
    const list = owned.get(seam.owner);
    if (list) list.push(seam);
    else owned.set(seam.owner, [seam]);
  }
  return (callId) => owned.get(callId) ?? [];
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
  const slice = new TimeSlice();
  const redacted = await mapSliced(messages, (message) => redactMessage(message, once), slice);
  // A secret split over two messages is read across their seam, as the transcript joins them.
  await redactMessageSeams(messages, redacted, once, slice);
  return redacted;
}

/**
 * What the summarizers see: the messages, the previous summary and the note redacted; the messages'
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
  await redactWireSeams(prefix.messages, messages, once, slice);
  return { ...prefix, messages };
}

async function summarizerInput<
  R extends Pick<
    SummarizeRequest,
    'messages' | 'previousSummary' | 'keep' | 'sentPrefix' | 'maxTokens' | 'note'
  >,
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
    // A manual compaction's note is the user's text too (`/compact keep the token ...`).
    ...(request.note && redact ? { note: redact(request.note) } : {}),
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
  const { emit, redact } = context;
  const deadline = Date.now() + context.timeoutMs;
  // The conversation's sent prefix is redacted and handed over only to a summarizer that reads it.
  const wanted = context.chain.some((summarizer) => summarizer.readsSentPrefix === true);
  const { sentPrefix, ...rest } = request;
  const input = await summarizerInput(wanted && sentPrefix ? { ...rest, sentPrefix } : rest, redact);
  const run: ChainRun = {
    context,
    request,
    input,
    version,
    checkOutput,
    fillTokens,
    deadline,
    hooks: summarizerHooks(context),
  };
  for (let attempt = 0; attempt < context.chain.length; attempt++) {
    const summarizer = context.chain[attempt]!;
    const start = Date.now();
    try {
      return await callChainMember(run, attempt, start);
    } catch (error) {
      if (request.signal?.aborted)
        throw new CompactError('aborted', 'compaction aborted by the caller', { cause: error });
      emit(
        'compact.error',
        {
          errorType: isCompactError(error) ? error.code : 'summarizer_failed',
          message: error instanceof Error ? error.message : String(error),
          fallback: context.chain[attempt + 1]?.name ?? 'pruning-only',
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
