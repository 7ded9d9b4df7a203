import type OpenAI from 'openai';
import { CompactError } from '../../core/errors.js';
import type { Summarizer } from '../../core/summary/summarizer.js';
import { lazySdkClient, toSummarizerError } from '../client-errors.js';
import { createLlmSummarizer, type LlmSummarizerOptions } from '../llm-summarizer.js';

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
  return createLlmSummarizer(
    name,
    async ({ system, user, maxTokens, signal }) => {
      const client = await getClient();
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      try {
        completion = await client.chat.completions.create(
          {
            model,
            messages: [
              { role: 'system', content: system },
              { role: 'user', content: user },
            ],
            [maxTokensField]: maxTokens,
            temperature,
            seed,
          },
          { maxRetries, ...(signal === undefined ? {} : { signal }) },
        );
      } catch (error) {
        throw toSummarizerError(name, error);
      }
      const choice = completion.choices?.[0];
      if (!choice) throw new CompactError('summarizer_failed', `${name}: response has no choices`);
      if (choice.message?.refusal) {
        throw new CompactError('summarizer_refused', `${name} refused: ${choice.message.refusal}`);
      }
      if (choice.finish_reason === 'content_filter') {
        throw new CompactError('summarizer_refused', `${name} refused: finish_reason content_filter`);
      }
      if (choice.finish_reason === 'length') {
        throw new CompactError(
          'summary_too_long',
          `${name}: summary hit the ${maxTokens}-token output limit`,
        );
      }
      const text = choice.message?.content;
      if (typeof text !== 'string')
        throw new CompactError('summarizer_failed', `${name}: response has no text`);
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
    },
    { endpoint, ...llmOptions },
  );
}
