import type Anthropic from '@anthropic-ai/sdk';
import { CompactError } from '../../core/errors.js';
import type { Summarizer } from '../../core/summary/summarizer.js';
import { withCachedPrefix } from '../cached-prefix.js';
import { lazySdkClient, toSummarizerError } from '../client-errors.js';
import { type CompletionResult, createLlmSummarizer, type LlmSummarizerOptions } from '../llm-summarizer.js';

/** Anthropic's limit of `cache_control` breakpoints in one request. */
const MAX_CACHE_BREAKPOINTS = 4;

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
  /**
   * Send each summary request as the conversation's own prefix followed by the summary
   * instruction, so the prompt cache serves the history (a cache read is billed at 0.1x the
   * input price) instead of a transcript rendered into one prompt. Use it only when `model`
   * is the conversation's model: a cache is per model. The manager hands the summarizer the
   * conversation's last request up to the last folded message, as sent
   * (`SummarizeRequest.sentPrefix`: pinned messages, kept user text, the previous summary,
   * the folded messages; redacted), sent with `system` and `tools` and a `cache_control`
   * breakpoint on its last message (when the request holds fewer than 4), then one user
   * message with the strategy's instructions, the previous summary and the sections to keep.
   * A call falls back to the transcript when redaction changed a message, another message
   * carries the library's markup, a tool call and its result are not both in the prefix, the
   * history opens with an assistant turn, or a message is in another format.
   * bench/summary-prefix.ts: 0.78x (32k) and 0.59x (128k) of the transcript's cost. See
   * docs/configuration.md.
   * @default false (the rendered transcript)
   */
  cachedPrefix?: boolean | AnthropicCachedPrefixOptions;
}

/** What the conversation sends before its messages, for {@link AnthropicSummarizerOptions.cachedPrefix}. */
export interface AnthropicCachedPrefixOptions {
  /**
   * The conversation's `system`, byte for byte as it sends it.
   * @default undefined (not sent)
   */
  system?: string | readonly Anthropic.Messages.TextBlockParam[];
  /**
   * The conversation's `tools`, as it sends them (they come first in the cached prefix). The
   * summary call never calls one (a `tool_use` answer is a failure).
   * @default undefined (not sent)
   */
  tools?: readonly Anthropic.Messages.ToolUnion[];
}

function countBreakpoints(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countBreakpoints(item), 0);
  let count = 'cache_control' in value && (value as { cache_control?: unknown }).cache_control ? 1 : 0;
  for (const item of Object.values(value)) count += countBreakpoints(item);
  return count;
}

/**
 * The prefix with a `cache_control` breakpoint on its last message's last cacheable block (a
 * string content becomes one text block), unless the request already holds the API's maximum.
 * New objects: the caller's are never touched.
 */
function withPrefixBreakpoint(
  prefix: readonly Record<string, unknown>[],
  head: unknown,
): Record<string, unknown>[] {
  const out = [...prefix];
  const last = out[out.length - 1];
  if (!last || countBreakpoints([head, prefix]) >= MAX_CACHE_BREAKPOINTS) return out;
  const content = last.content;
  const blocks: Record<string, unknown>[] =
    typeof content === 'string'
      ? [{ type: 'text', text: content }]
      : Array.isArray(content)
        ? (content as Record<string, unknown>[]).map((block) => ({ ...block }))
        : [];
  const at = blocks.findLastIndex(
    (block) => block.type !== 'thinking' && block.type !== 'redacted_thinking' && !block.cache_control,
  );
  if (at < 0 || blocks.some((block) => block.cache_control)) return out;
  blocks[at] = { ...blocks[at], cache_control: { type: 'ephemeral' } };
  out[out.length - 1] = { ...last, content: blocks };
  return out;
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
    cachedPrefix = false,
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
  const create: CreateMessage = async (params, maxTokens, signal) => {
    const client = await getClient();
    let message: Anthropic.Messages.Message;
    try {
      message = await client.messages.create(
        {
          model,
          ...params,
          max_tokens: maxTokens,
          // Deprecated in the current API types; older models still honour it.
          ...((temperature === undefined ? {} : { temperature }) as Record<string, never>),
        },
        { maxRetries, ...(signal === undefined ? {} : { signal }) },
      );
    } catch (error) {
      throw toSummarizerError(name, error);
    }
    return readMessage(name, model, message, maxTokens);
  };

  const transcript = createLlmSummarizer(
    name,
    ({ system, user, maxTokens, signal }) =>
      create({ system, messages: [{ role: 'user', content: user }] }, maxTokens, signal),
    { endpoint, ...llmOptions },
  );
  if (!cachedPrefix) return transcript;
  return withAnthropicPrefix(transcript, create, cachedPrefix === true ? {} : cachedPrefix, llmOptions);
}

type CreateMessage = (
  params: Pick<Anthropic.Messages.MessageCreateParamsNonStreaming, 'messages'> & {
    system?: string | Anthropic.Messages.TextBlockParam[];
    tools?: Anthropic.Messages.ToolUnion[];
  },
  maxTokens: number,
  signal: AbortSignal | undefined,
) => Promise<CompletionResult>;

/** The summary text of a message, or the typed error its refusal, cut or tool call means. */
function readMessage(
  name: string,
  model: string,
  message: Anthropic.Messages.Message,
  maxTokens: number,
): CompletionResult {
  if (message.stop_reason === 'refusal') {
    throw new CompactError('summarizer_refused', `${name} refused: stop_reason refusal`);
  }
  if (message.stop_reason === 'max_tokens') {
    throw new CompactError('summary_too_long', `${name}: summary hit the ${maxTokens}-token output limit`);
  }
  if (message.stop_reason === 'tool_use') {
    throw new CompactError('summarizer_failed', `${name}: answered with a tool call instead of a summary`);
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
}

/** The transcript summarizer sent as the conversation's own prefix (see `cachedPrefix`). */
function withAnthropicPrefix(
  transcript: Summarizer,
  create: CreateMessage,
  head: AnthropicCachedPrefixOptions,
  llmOptions: LlmSummarizerOptions,
): Summarizer {
  const { contextTokens, endpoint: _endpoint, ...promptOptions } = llmOptions;
  return withCachedPrefix(
    transcript,
    ({ prefix, instruction, maxTokens, signal }) =>
      create(
        {
          ...(head.tools === undefined ? {} : { tools: [...head.tools] }),
          ...(head.system === undefined
            ? {}
            : { system: typeof head.system === 'string' ? head.system : [...head.system] }),
          messages: [
            ...(withPrefixBreakpoint(prefix, [
              head.system,
              head.tools,
            ]) as unknown as Anthropic.Messages.MessageParam[]),
            { role: 'user', content: instruction },
          ],
        },
        maxTokens,
        signal,
      ),
    {
      ...promptOptions,
      format: 'anthropic',
      ...(contextTokens === undefined ? {} : { contextTokens }),
      headTokens: Math.ceil(JSON.stringify([head.system ?? '', head.tools ?? []]).length / 4),
    },
  );
}
