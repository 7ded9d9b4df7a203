import type OpenAI from 'openai';
import { CompactError } from '../../core/errors.js';
import type { Summarizer } from '../../core/summary/summarizer.js';
import { withCachedPrefix } from '../cached-prefix.js';
import { lazySdkClient, toSummarizerError } from '../client-errors.js';
import { type CompletionResult, createLlmSummarizer, type LlmSummarizerOptions } from '../llm-summarizer.js';

/** The seed sent by default, so summaries are reproducible where the provider honours it. */
export const DEFAULT_SUMMARY_SEED = 42;

/** Options of {@link openaiSummarizer}. */
export interface OpenAISummarizerOptions extends LlmSummarizerOptions {
  /** The summarization model, e.g. `gpt-4o-mini` (can differ from the agent's model). */
  model: string;
  /**
   * An `openai` client to use (any OpenAI-compatible endpoint).
   * @default a new `OpenAI({ apiKey, baseURL, maxRetries, timeout })`
   */
  client?: OpenAI;
  /**
   * API key for the client created here.
   * @default process.env.OPENAI_API_KEY (read by the SDK)
   */
  apiKey?: string;
  /**
   * Base URL for the client created here.
   * @default the SDK's default (`https://api.openai.com/v1` or OPENAI_BASE_URL)
   */
  baseURL?: string;
  /**
   * Sampling seed.
   * @default 42
   */
  seed?: number;
  /**
   * Sampling temperature.
   * @default 0
   */
  temperature?: number;
  /**
   * Retries the SDK makes on 408/409/429/5xx and connection errors, per call.
   * @default 2
   */
  maxRetries?: number;
  /**
   * Per-request timeout of the SDK in ms (the resilient wrapper's timeout aborts sooner).
   * @default 60000
   */
  timeout?: number;
  /**
   * Request field carrying the output limit: `max_completion_tokens` (current OpenAI API) or
   * `max_tokens` (older OpenAI-compatible servers).
   * @default 'max_completion_tokens'
   */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens';
  /**
   * Send each summary request as the conversation's own prefix followed by the summary
   * instruction, so the provider's prompt cache serves the history (cached input is billed at
   * a fraction of the input price), instead of a transcript rendered into one prompt. Use it
   * only when `model` is the conversation's model and the conversation speaks Chat
   * Completions: a cache is per model. The manager hands the summarizer the conversation's
   * last request up to the last folded message, as sent (`SummarizeRequest.sentPrefix`:
   * pinned messages, kept user text, the previous summary, the folded messages; redacted);
   * it goes out after `messages` (skipped when the prefix already opens with them) and with
   * `tools`, then one user message with the strategy's instructions, the previous summary and
   * the sections to keep. A call falls back to the transcript when redaction changed a
   * message, another message carries the library's markup, a tool call and its result are
   * not both in the prefix, or a message is in another format. bench/summary-prefix.ts:
   * 0.76x (32k) and 0.57x (128k) of the transcript's cost. See docs/configuration.md.
   * @default false (the rendered transcript)
   */
  cachedPrefix?: boolean | OpenAICachedPrefixOptions;
}

/** What the conversation sends before its history, for {@link OpenAISummarizerOptions.cachedPrefix}. */
export interface OpenAICachedPrefixOptions {
  /**
   * The messages the conversation sends before its history (its system or developer
   * prompt), byte for byte as it sends them.
   * @default [] (none)
   */
  messages?: readonly OpenAI.Chat.Completions.ChatCompletionMessageParam[];
  /**
   * The conversation's tools, as it sends them: tool schemas are part of the cached prefix.
   * The summary call never calls one (an answer with tool calls is a failure).
   * @default undefined (not sent)
   */
  tools?: readonly OpenAI.Chat.Completions.ChatCompletionTool[];
}

/**
 * A summarizer that calls the OpenAI Chat Completions API through the official `openai` package
 * (an optional peer, imported on first use). Sends `seed` and `temperature`, the output limit
 * equal to the summary's `maxTokens`, and throws `summarizer_refused` on a refusal or
 * `finish_reason: content_filter`, `summary_too_long` on `finish_reason: length`.
 *
 * @example
 * ```ts
 * const summarizer = resilientSummarizer(openaiSummarizer({ model: 'gpt-4o-mini' }));
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000, summarizer });
 * ```
 */
export function openaiSummarizer(options: OpenAISummarizerOptions): Summarizer {
  const {
    model,
    client: injected,
    apiKey,
    baseURL,
    seed = DEFAULT_SUMMARY_SEED,
    temperature = 0,
    maxRetries = 2,
    timeout = 60_000,
    maxTokensField = 'max_completion_tokens',
    cachedPrefix = false,
    ...llmOptions
  } = options;
  if (!model) throw new CompactError('invalid_config', 'openaiSummarizer: model is required');
  const name = `openai:${model}`;
  const getClient = lazySdkClient<OpenAI>(
    'openai',
    () =>
      import('openai') as unknown as Promise<{ default: new (options: Record<string, unknown>) => OpenAI }>,
    injected,
    { maxRetries, timeout, apiKey, baseURL },
  );

  const endpoint =
    (injected as { baseURL?: string } | undefined)?.baseURL ??
    baseURL ??
    process.env.OPENAI_BASE_URL ??
    'https://api.openai.com/v1';
  const create: CreateCompletion = async (messages, maxTokens, signal, tools) => {
    const client = await getClient();
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await client.chat.completions.create(
        {
          model,
          messages,
          ...(tools === undefined ? {} : { tools: [...tools] }),
          [maxTokensField]: maxTokens,
          temperature,
          seed,
        },
        { maxRetries, ...(signal === undefined ? {} : { signal }) },
      );
    } catch (error) {
      throw toSummarizerError(name, error);
    }
    return readCompletion(name, model, completion, maxTokens);
  };

  const transcript = createLlmSummarizer(
    name,
    ({ system, user, maxTokens, signal }) =>
      create(
        [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        maxTokens,
        signal,
      ),
    { endpoint, ...llmOptions },
  );
  if (!cachedPrefix) return transcript;
  return withOpenAIPrefix(transcript, create, cachedPrefix === true ? {} : cachedPrefix, llmOptions);
}

type CreateCompletion = (
  messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[],
  maxTokens: number,
  signal: AbortSignal | undefined,
  tools?: readonly OpenAI.Chat.Completions.ChatCompletionTool[],
) => Promise<CompletionResult>;

/** The summary text of a completion, or the typed error its refusal, cut or tool call means. */
function readCompletion(
  name: string,
  model: string,
  completion: OpenAI.Chat.Completions.ChatCompletion,
  maxTokens: number,
): CompletionResult {
  const choice = completion.choices?.[0];
  if (!choice) throw new CompactError('summarizer_failed', `${name}: response has no choices`);
  if (choice.message?.refusal) {
    throw new CompactError('summarizer_refused', `${name} refused: ${choice.message.refusal}`);
  }
  if (choice.finish_reason === 'content_filter') {
    throw new CompactError('summarizer_refused', `${name} refused: finish_reason content_filter`);
  }
  if (choice.finish_reason === 'length') {
    throw new CompactError('summary_too_long', `${name}: summary hit the ${maxTokens}-token output limit`);
  }
  if (choice.finish_reason === 'tool_calls' || (choice.message?.tool_calls?.length ?? 0) > 0) {
    throw new CompactError('summarizer_failed', `${name}: answered with a tool call instead of a summary`);
  }
  const text = choice.message?.content;
  if (typeof text !== 'string') throw new CompactError('summarizer_failed', `${name}: response has no text`);
  return {
    text,
    model: completion.model ?? model,
    ...(completion.usage
      ? {
          usage: {
            inputTokens: completion.usage.prompt_tokens,
            outputTokens: completion.usage.completion_tokens,
          },
        }
      : {}),
  };
}

/** The transcript summarizer sent as the conversation's own prefix (see `cachedPrefix`). */
function withOpenAIPrefix(
  transcript: Summarizer,
  create: CreateCompletion,
  head: OpenAICachedPrefixOptions,
  llmOptions: LlmSummarizerOptions,
): Summarizer {
  const { contextTokens, endpoint: _endpoint, ...promptOptions } = llmOptions;
  return withCachedPrefix(
    transcript,
    ({ prefix, instruction, maxTokens, signal }) =>
      create(
        [
          // The conversation's own request (`sentPrefix`) already opens with its system prompt.
          ...(opensWith(prefix, head.messages ?? []) ? [] : (head.messages ?? [])),
          ...(prefix as unknown as OpenAI.Chat.Completions.ChatCompletionMessageParam[]),
          { role: 'user', content: instruction },
        ],
        maxTokens,
        signal,
        head.tools,
      ),
    {
      ...promptOptions,
      format: 'openai-chat',
      ...(contextTokens === undefined ? {} : { contextTokens }),
      headTokens: Math.ceil(JSON.stringify([head.messages ?? [], head.tools ?? []]).length / 4),
    },
  );
}

/** Whether `prefix` starts with `head`, message for message. */
function opensWith(prefix: readonly unknown[], head: readonly unknown[]): boolean {
  return head.length > 0 && head.every((message, k) => JSON.stringify(prefix[k]) === JSON.stringify(message));
}
