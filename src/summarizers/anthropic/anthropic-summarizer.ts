import type Anthropic from '@anthropic-ai/sdk';
import { CompactError } from '../../core/errors.js';
import type { Summarizer } from '../../core/summary/summarizer.js';
import { lazySdkClient, toSummarizerError } from '../client-errors.js';
import { createLlmSummarizer, type LlmSummarizerOptions } from '../llm-summarizer.js';

/** Options of {@link anthropicSummarizer}. */
export interface AnthropicSummarizerOptions extends LlmSummarizerOptions {
  /** The summarization model, e.g. `claude-haiku-4-5` (can differ from the agent's model). */
  model: string;
  /**
   * An `@anthropic-ai/sdk` client to use.
   * @default a new `Anthropic({ apiKey, baseURL, maxRetries, timeout })`
   */
  client?: Anthropic;
  /**
   * API key for the client created here.
   * @default process.env.ANTHROPIC_API_KEY (read by the SDK)
   */
  apiKey?: string;
  /**
   * Base URL for the client created here.
   * @default the SDK's default (`https://api.anthropic.com` or ANTHROPIC_BASE_URL)
   */
  baseURL?: string;
  /**
   * Sampling temperature. Recent versions of the Messages API deprecate it (and the SDK's types
   * no longer list it), so it is sent only when set; the Messages API has no seed.
   * @default undefined (not sent)
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
}

/**
 * A summarizer that calls the Anthropic Messages API (`messages.create`) through the official
 * `@anthropic-ai/sdk` (an optional peer, imported on first use). Sends `max_tokens` equal to the
 * summary's `maxTokens` (and `temperature` when set; the API has no seed), and throws
 * `summarizer_refused` on `stop_reason: refusal`, `summary_too_long` on `stop_reason: max_tokens`.
 *
 * @example
 * ```ts
 * const summarizer = resilientSummarizer(anthropicSummarizer({ model: 'claude-haiku-4-5' }));
 * ```
 */
export function anthropicSummarizer(options: AnthropicSummarizerOptions): Summarizer {
  const {
    model,
    client: injected,
    apiKey,
    baseURL,
    temperature,
    maxRetries = 2,
    timeout = 60_000,
    ...llmOptions
  } = options;
  if (!model) throw new CompactError('invalid_config', 'anthropicSummarizer: model is required');
  const name = `anthropic:${model}`;
  const getClient = lazySdkClient<Anthropic>(
    '@anthropic-ai/sdk',
    () =>
      import('@anthropic-ai/sdk') as unknown as Promise<{
        default: new (options: Record<string, unknown>) => Anthropic;
      }>,
    injected,
    { maxRetries, timeout, apiKey, baseURL },
  );

  const endpoint =
    (injected as { baseURL?: string } | undefined)?.baseURL ??
    baseURL ??
    process.env.ANTHROPIC_BASE_URL ??
    'https://api.anthropic.com';
  return createLlmSummarizer(
    name,
    async ({ system, user, maxTokens, signal }) => {
      const client = await getClient();
      let message: Anthropic.Messages.Message;
      try {
        message = await client.messages.create(
          {
            model,
            system,
            messages: [{ role: 'user', content: user }],
            max_tokens: maxTokens,
            // Deprecated in the current API types; older models still honour it.
            ...((temperature === undefined ? {} : { temperature }) as Record<string, never>),
          },
          { maxRetries, ...(signal === undefined ? {} : { signal }) },
        );
      } catch (error) {
        throw toSummarizerError(name, error);
      }
      if (message.stop_reason === 'refusal') {
        throw new CompactError('summarizer_refused', `${name} refused: stop_reason refusal`);
      }
      if (message.stop_reason === 'max_tokens') {
        throw new CompactError(
          'summary_too_long',
          `${name}: summary hit the ${maxTokens}-token output limit`,
        );
      }
      if (!Array.isArray(message.content)) {
        throw new CompactError('summarizer_failed', `${name}: response has no content`);
      }
      const text = message.content
        .filter((block): block is Anthropic.Messages.TextBlock => block.type === 'text')
        .map((block) => block.text)
        .join('');
      return {
        text,
        model: message.model ?? model,
        ...(message.usage
          ? { usage: { inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens } }
          : {}),
      };
    },
    { endpoint, ...llmOptions },
  );
}
