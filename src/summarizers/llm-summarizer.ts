import { CompactError } from '../core/errors.js';
import type { SummarizeRequest, SummarizeResult, Summarizer } from '../core/summary/summarizer.js';
import { acceptedSummaryText } from '../core/summary/summary-guard.js';
import {
  buildSummaryPrompt,
  type SummaryPrompt,
  type SummaryPromptOptions,
} from './prompts/build-summary-prompt.js';
import { chunkTranscriptEntries, renderTranscriptEntries } from './render-transcript.js';

/** One model call a summarizer client makes. */
export interface CompletionRequest {
  /** The system prompt. */
  system: string;
  /** The user prompt. */
  user: string;
  /** Maximum output tokens for this call. */
  maxTokens: number;
  /** Aborted on timeout or when the caller gives up. */
  signal?: AbortSignal;
}

/** What a model call returned. */
export interface CompletionResult {
  /** The generated text. */
  text: string;
  /** The model that answered, as the provider reports it. */
  model?: string;
  /** Token usage of the call, when reported. */
  usage?: { inputTokens: number; outputTokens: number };
}

/** Makes one model call; throws `CompactError('summarizer_refused' | 'summary_too_long' | ...)`. */
export type CompleteFunction = (request: CompletionRequest) => Promise<CompletionResult>;

/** Options every LLM summarizer accepts. */
export interface LlmSummarizerOptions extends SummaryPromptOptions {
  /**
   * The summarization model's context window in tokens. When the rendered history plus the
   * prompt and the summary would not fit, the history is summarized in chunks and the partial
   * summaries are merged (map-reduce), so compaction never fails for a too-large input.
   * @default undefined (no chunking)
   */
  contextTokens?: number;
  /**
   * Where the calls go (a base URL), for the circuit breaker's key.
   * @default undefined (the breaker is keyed by name only)
   */
  endpoint?: string;
}

/** Tokens kept free in the summarizer's context for message framing. */
const CONTEXT_MARGIN = 64;

function addUsage(
  total: { inputTokens: number; outputTokens: number } | undefined,
  usage: { inputTokens: number; outputTokens: number } | undefined,
): { inputTokens: number; outputTokens: number } | undefined {
  if (usage === undefined) return total;
  if (total === undefined) return { ...usage };
  return {
    inputTokens: total.inputTokens + usage.inputTokens,
    outputTokens: total.outputTokens + usage.outputTokens,
  };
}

/**
 * Builds a {@link Summarizer} from one model-call function: renders the history, builds the
 * strategy prompt, chunks and merges when the history exceeds `contextTokens`, and returns
 * `{text, model, usage}`. The provider clients (`openaiSummarizer`, `anthropicSummarizer`,
 * `aiSdkSummarizer`, `llamaCppSummarizer`) are built on it.
 *
 * @example
 * ```ts
 * const summarizer = createLlmSummarizer('my-llm', async ({ system, user, maxTokens, signal }) => {
 *   const text = await myModel.generate({ system, user, maxTokens, signal });
 *   return { text, model: 'my-model' };
 * }, { contextTokens: 8192 });
 * ```
 */
export function createLlmSummarizer(
  name: string,
  complete: CompleteFunction,
  options: LlmSummarizerOptions = {},
): Summarizer {
  const { contextTokens, endpoint, ...promptOptions } = options;

  const call = async (prompt: SummaryPrompt, request: SummarizeRequest) => {
    const result = await complete({
      system: prompt.system,
      user: prompt.user,
      maxTokens: request.maxTokens,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    // Every call, partial summaries of a map-reduce included: a plain-text refusal or an echo
    // of the prompt must not be merged into the summary. (The strategy's structure is checked
    // on the final summary, by the resilient wrapper and the manager.)
    return { ...result, text: acceptedSummaryText(name, result.text) };
  };

  return {
    name,
    ...(endpoint === undefined ? {} : { endpoint }),
    async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
      const count = promptOptions.countTokens ?? request.countTokens;
      const renderOptions = { ...promptOptions, countTokens: count };
      const entries = renderTranscriptEntries(request.messages, renderOptions);
      const transcript = entries.map((entry) => entry.text).join('\n');
      const single = buildSummaryPrompt(request, renderOptions, { transcript });
      if (
        contextTokens === undefined ||
        count(single.system) + count(single.user) + request.maxTokens + CONTEXT_MARGIN <= contextTokens
      ) {
        const result = await call(single, request);
        return { text: result.text, summarizer: name, ...pickModel(result) };
      }

      // Map-reduce: the history does not fit the summarizer's own context.
      const empty = buildSummaryPrompt(request, renderOptions, { transcript: '' });
      const available =
        contextTokens - count(empty.system) - count(empty.user) - request.maxTokens - CONTEXT_MARGIN;
      if (available < request.maxTokens * 2) {
        throw new CompactError(
          'summarizer_failed',
          `${name}: contextTokens ${contextTokens} leaves ${available} tokens for history; at least ${request.maxTokens * 2} are needed to chunk and merge`,
        );
      }
      return mapReduce(
        name,
        call,
        request,
        renderOptions,
        chunkTranscriptEntries(entries, available, count),
        available,
      );
    },
  };
}

type Call = (prompt: SummaryPrompt, request: SummarizeRequest) => Promise<CompletionResult>;

/**
 * Summarizes each chunk apart (without the previous summary), then merges the partial
 * summaries, chunked again while they do not fit: a history over the summarizer's own context.
 */
async function mapReduce(
  name: string,
  call: Call,
  request: SummarizeRequest,
  renderOptions: Parameters<typeof buildSummaryPrompt>[1] & { countTokens: (text: string) => number },
  firstChunks: string[],
  available: number,
): Promise<SummarizeResult> {
  let usage: { inputTokens: number; outputTokens: number } | undefined;
  let model: string | undefined;
  let chunks = firstChunks;
  const count = renderOptions.countTokens;
  const { previousSummary: _previous, ...withoutPrevious } = request;
  for (;;) {
    const partials: string[] = [];
    for (const [i, chunk] of chunks.entries()) {
      const prompt = buildSummaryPrompt(withoutPrevious, renderOptions, { transcript: chunk });
      const result = await call(prompt, request);
      usage = addUsage(usage, result.usage);
      model = result.model ?? model;
      partials.push(`[part ${i + 1} of ${chunks.length}, summary of consecutive history]\n${result.text}`);
    }
    const merged = partials.map((text, i) => ({ id: `part-${i}`, text }));
    const next = chunkTranscriptEntries(merged, available, count);
    if (next.length === 1) {
      const result = await call(
        buildSummaryPrompt(request, renderOptions, { transcript: next[0] ?? '' }),
        request,
      );
      usage = addUsage(usage, result.usage);
      model = result.model ?? model;
      return {
        text: result.text,
        summarizer: name,
        ...(model === undefined ? {} : { model }),
        ...(usage === undefined ? {} : { usage }),
      };
    }
    if (next.length >= chunks.length) {
      throw new CompactError(
        'summarizer_failed',
        `${name}: partial summaries do not shrink; raise contextTokens`,
      );
    }
    chunks = next;
  }
}

function pickModel(result: CompletionResult): Pick<SummarizeResult, 'model' | 'usage'> {
  return {
    ...(result.model === undefined ? {} : { model: result.model }),
    ...(result.usage === undefined ? {} : { usage: result.usage }),
  };
}
