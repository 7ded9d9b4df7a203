import type { CompactMessage } from '../core/messages/message.js';

/** Default token budget for one tool result (or one tool call's arguments) in a rendered transcript. */
export const DEFAULT_TOOL_RESULT_TOKENS = 400;

/** Default token budget for one message's text in a rendered transcript. */
export const DEFAULT_MESSAGE_TOKENS = 2_000;

/** Options of {@link renderTranscript}. */
export interface RenderTranscriptOptions {
  /**
   * Counts tokens (use the manager's counter, `SummarizeRequest.countTokens`).
   * @default a 4-characters-per-token estimate
   */
  countTokens?: (text: string) => number;
  /**
   * Token budget of one tool result or one tool call's arguments; longer ones keep their head
   * and tail with an omission marker in between.
   * @default 400
   */
  toolResultTokens?: number;
  /**
   * Token budget of one message's text; longer texts are shortened head-and-tail.
   * @default 2000
   */
  messageTokens?: number;
}

/** One rendered message: the unit the map-reduce chunker never splits. */
export interface TranscriptEntry {
  /** The message's id. */
  id: string;
  /** The rendered text of the message (possibly several lines). */
  text: string;
}

/** A 4-characters-per-token estimate, used when no counter is given. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Shortens `text` to about `budget` tokens by keeping its head and its tail, with a marker
 * saying how much was left out. Text within budget is returned unchanged.
 *
 * @example
 * ```ts
 * shortenHeadTail(hugeLog, 200, countTokens) // "first lines … [1834 tokens omitted] … last lines"
 * ```
 */
export function shortenHeadTail(
  text: string,
  budget: number,
  countTokens: (text: string) => number = estimateTokens,
): string {
  const total = countTokens(text);
  if (total <= budget) return text;
  const keepBudget = Math.max(0, budget - 12);
  // Scale by the text's own characters-per-token ratio, then shrink until it fits.
  let chars = Math.floor((text.length * keepBudget) / total);
  for (let attempt = 0; attempt < 8; attempt++) {
    const half = Math.floor(chars / 2);
    const head = text.slice(0, half);
    const tail = half > 0 ? text.slice(text.length - half) : '';
    const omitted = Math.max(0, total - countTokens(head) - countTokens(tail));
    const candidate = `${head} … [${omitted} tokens omitted] … ${tail}`;
    if (countTokens(candidate) <= budget || chars === 0) return candidate;
    chars = Math.floor(chars * 0.8);
  }
  return `… [${total} tokens omitted] …`;
}

function roleLabel(message: CompactMessage): string {
  if (message.kind === 'reasoning') return `${message.role} reasoning`;
  if (message.kind === 'other') return `${message.role} ${message.itemType ?? 'item'}`;
  return message.role;
}

/** Indents continuation lines so a payload line can never pose as a message header. */
function indent(text: string): string {
  return text.replace(/\n/g, '\n    ');
}

/** Collapses runs of blank lines and trailing spaces so the transcript stays compact. */
function tidy(text: string): string {
  return text
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * Renders each message as a compact, labelled entry: `[#index role] text`, tool calls as
 * `-> call name(arguments) [id]`, tool results as `<- result [id]: output`, each tool
 * payload shortened head-and-tail to its budget. Message objects are never dumped as JSON.
 */
export function renderTranscriptEntries(
  messages: readonly CompactMessage[],
  options: RenderTranscriptOptions = {},
): TranscriptEntry[] {
  const count = options.countTokens ?? estimateTokens;
  const toolBudget = options.toolResultTokens ?? DEFAULT_TOOL_RESULT_TOKENS;
  const messageBudget = options.messageTokens ?? DEFAULT_MESSAGE_TOKENS;
  return messages.map((message) => {
    const lines: string[] = [];
    const text = tidy(message.text);
    const header = `[#${message.index} ${roleLabel(message)}]`;
    lines.push(text ? `${header} ${shortenHeadTail(text, messageBudget, count)}` : header);
    for (const call of message.toolCalls) {
      const args = shortenHeadTail(call.arguments.trim(), toolBudget, count);
      lines.push(`  -> call ${call.name}(${indent(args)}) [${call.id}]`);
    }
    for (const result of message.toolResults) {
      const output = shortenHeadTail(tidy(result.output), toolBudget, count);
      lines.push(`  <- ${result.isError ? 'error' : 'result'} [${result.callId}]: ${indent(output)}`);
    }
    return { id: message.id, text: lines.join('\n') };
  });
}

/**
 * Renders messages as one compact transcript for a summarizer (entries joined by newlines).
 *
 * @example
 * ```ts
 * const transcript = renderTranscript(request.messages, { countTokens: request.countTokens });
 * ```
 */
export function renderTranscript(
  messages: readonly CompactMessage[],
  options: RenderTranscriptOptions = {},
): string {
  return renderTranscriptEntries(messages, options)
    .map((entry) => entry.text)
    .join('\n');
}

/**
 * Splits rendered entries into chunks of at most `budget` tokens each, in order. An entry that is
 * larger than the budget on its own is shortened head-and-tail to fit its own chunk.
 */
export function chunkTranscriptEntries(
  entries: readonly TranscriptEntry[],
  budget: number,
  countTokens: (text: string) => number = estimateTokens,
): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let currentTokens = 0;
  for (const entry of entries) {
    let text = entry.text;
    let tokens = countTokens(text) + 1;
    if (tokens > budget) {
      text = shortenHeadTail(text, budget - 1, countTokens);
      tokens = countTokens(text) + 1;
    }
    if (currentTokens + tokens > budget && current.length > 0) {
      chunks.push(current.join('\n'));
      current = [];
      currentTokens = 0;
    }
    current.push(text);
    currentTokens += tokens;
  }
  if (current.length > 0) chunks.push(current.join('\n'));
  return chunks;
}
