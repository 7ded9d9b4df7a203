import type { LanguageModel } from 'ai';
import { CompactError } from '../../core/errors.js';
import type { Summarizer } from '../../core/summary/summarizer.js';
import { importPeer, toSummarizerError } from '../client-errors.js';
import { createLlmSummarizer, type LlmSummarizerOptions } from '../llm-summarizer.js';

/** Options of {@link aiSdkSummarizer}. */
export interface AiSdkSummarizerOptions extends LlmSummarizerOptions {
  /** Any AI SDK language model (`openai('gpt-4o-mini')`, `anthropic(...)`, a gateway id ...). */
  model: LanguageModel;
  /**
   * Sampling seed, passed to providers that support one.
   * @default 42
   */
  seed?: number;
  /**
   * Sampling temperature.
   * @default 0
   */
  temperature?: number;
  /**
   * Retries `generateText` makes on retryable errors, per call.
   * @default 2
   */
  maxRetries?: number;
  /**
   * `generateText` to use (injectable for tests or a wrapped version).
   * @default `generateText` from `ai`, imported on first use
   */
  generateText?: typeof import('ai').generateText;
}

/**
 * A summarizer over any Vercel AI SDK `LanguageModel`, through `generateText`, so every provider
 * the AI SDK supports can summarize. Sends `seed`, `temperature` and `maxOutputTokens` equal to
 * the summary's `maxTokens`; throws `summarizer_refused` on `finishReason: content-filter` and
 * `summary_too_long` on `finishReason: length`.
 *
 * @example
 * ```ts
 * import { openai } from '@ai-sdk/openai';
 * const summarizer = resilientSummarizer(aiSdkSummarizer({ model: openai.chat('gpt-4o-mini') }));
 * ```
 */
export function aiSdkSummarizer(options: AiSdkSummarizerOptions): Summarizer {
  const {
    model,
    seed = 42,
    temperature = 0,
    maxRetries = 2,
    generateText: injected,
    ...llmOptions
  } = options;
  if (!model) throw new CompactError('invalid_config', 'aiSdkSummarizer: model is required');
  const modelId = typeof model === 'string' ? model : model.modelId;
  const provider = typeof model === 'string' ? 'gateway' : model.provider;
  const name = `ai-sdk:${provider}:${modelId}`;
  let generatePromise: Promise<typeof import('ai').generateText> | undefined;

  return createLlmSummarizer(
    name,
    async ({ system, user, maxTokens, signal }) => {
      generatePromise ??= injected
        ? Promise.resolve(injected)
        : importPeer('ai', () => import('ai')).then((module) => module.generateText);
      const generateText = await generatePromise;
      let result: Awaited<ReturnType<typeof generateText>>;
      try {
        result = await generateText({
          model,
          system,
          prompt: user,
          maxOutputTokens: maxTokens,
          temperature,
          seed,
          maxRetries,
          ...(signal === undefined ? {} : { abortSignal: signal }),
        });
      } catch (error) {
        throw toSummarizerError(name, error);
      }
      if (result.finishReason === 'content-filter') {
        throw new CompactError('summarizer_refused', `${name} refused: finishReason content-filter`);
      }
      if (result.finishReason === 'length') {
        throw new CompactError(
          'summary_too_long',
          `${name}: summary hit the ${maxTokens}-token output limit`,
        );
      }
      const usage = result.usage;
      return {
        text: result.text,
        model: result.response?.modelId ?? modelId,
        ...(usage && usage.inputTokens !== undefined && usage.outputTokens !== undefined
          ? { usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens } }
          : {}),
      };
    },
    llmOptions,
  );
}
