import type { LanguageModelMiddleware, ModelMessage, ToolSet } from 'ai';
import { CompactError } from '../../core/errors.js';
import type { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactionResult } from '../../core/manager/manager-options.js';
import { replyTokensOf } from '../../core/preflight/body/reply-tokens.js';
import { checkAdapterOptions } from '../adapter-options.js';
import { compactWithEvents } from '../compact-with-events.js';
import { compactForRetry, contextOverflowOf, feedUsage } from '../overflow-recovery.js';
import { sendsMediaAsText } from './ai-sdk-media.js';
import {
  type AiSdkMessage,
  type AiSdkMessageKind,
  aiSdkToChat,
  aiSdkToChatInSlices,
  chatToAiSdk,
  chatToAiSdkInSlices,
} from './ai-sdk-messages.js';
import { callResponseSchema, callToolSchemas, toolSetSchemas } from './tool-set-schemas.js';

type TransformParams = NonNullable<LanguageModelMiddleware['transformParams']>;
type CallOptions = Parameters<TransformParams>[0]['params'];

/** Options of {@link compactionMiddleware}. */
export interface CompactionMiddlewareOptions {
  /**
   * The manager's session id: a string, or a function of the call's parameters.
   * @default `providerOptions.agentCompaction.sessionId` of the call; without either, the call fails (there is no shared default)
   */
  sessionId?: string | ((params: CallOptions) => string);
  /**
   * Count the call's tool schemas as part of the request.
   * @default true
   */
  countTools?: boolean;
  /** Called after each compaction check (for logging or status displays). */
  onCompaction?: (result: CompactionResult<unknown>, sessionId: string) => void;
}

/** Options of {@link compactMessages}. */
export interface CompactMessagesOptions {
  /** Tool schemas sent with the call (`{type:'function', name, description, parameters}`). */
  tools?: readonly unknown[];
  /** The format of `messages`. @default 'model-messages' */
  kind?: AiSdkMessageKind;
  /**
   * The provider the messages go to (the model's `provider`, e.g. `openai.chat`): a chat
   * provider (`*.chat`) sends a tool result's images as its JSON text, which is counted so.
   * @default unknown: images are counted as images
   */
  provider?: string;
  /**
   * A system prompt sent apart from `messages` (e.g. `generateText({ system })`, an agent's
   * `instructions`): counted in the budget, never sent back.
   */
  system?: string;
  /** A trace id for the manager's events. */
  traceId?: string;
  /** Aborts a running summarization. */
  signal?: AbortSignal;
  /** The reply's size the call asks for (`maxOutputTokens`), kept free below the window. */
  replyTokens?: number;
}

/**
 * Compacts AI SDK messages (a `ModelMessage[]` or a provider prompt) through the manager and
 * returns them in the same format, with the result.
 */
export async function compactMessages<M>(
  manager: CompactManager,
  sessionId: string,
  messages: readonly M[],
  options: CompactMessagesOptions = {},
): Promise<{ messages: M[]; result: CompactionResult<unknown> }> {
  // In slices: a first call of a long history converts every message.
  const chat = await aiSdkToChatInSlices(
    messages as unknown as readonly AiSdkMessage[],
    sendsMediaAsText(options.provider),
  );
  const { result } = await compactWithEvents(manager, sessionId, chat, {
    format: 'openai-chat',
    ...(options.tools && options.tools.length > 0 ? { tools: options.tools } : {}),
    ...(options.system ? { system: options.system } : {}),
    ...(options.traceId === undefined ? {} : { traceId: options.traceId }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...replyTokensOf(options.replyTokens),
  });
  return {
    messages: (await chatToAiSdkInSlices(
      result.messages,
      options.kind ?? 'model-messages',
    )) as unknown as M[],
    result: result as CompactionResult<unknown>,
  };
}

function sessionIdOf(option: CompactionMiddlewareOptions['sessionId'], params: CallOptions): string {
  if (typeof option === 'function') return option(params);
  if (typeof option === 'string') return option;
  const fromCall = (params.providerOptions?.agentCompaction as { sessionId?: unknown } | undefined)
    ?.sessionId;
  if (typeof fromCall === 'string' && fromCall !== '') return fromCall;
  // Never a shared default: one conversation's summary must not reach another's request.
  throw new CompactError(
    'invalid_config',
    'compactionMiddleware: no session id; pass { sessionId } (a string or a function of the call) or providerOptions.agentCompaction.sessionId',
    { issues: [{ path: ['sessionId'], message: 'is required' }] },
  );
}

const MIDDLEWARE_OPTIONS = ['sessionId', 'countTools', 'onCompaction'] as const;
const PREPARE_STEP_OPTIONS = ['sessionId', 'system', 'tools', 'replyTokens', 'onCompaction'] as const;

/**
 * A Vercel AI SDK language model middleware that compacts the prompt before every model call
 * (`transformParams`), with the call's tool schemas counted. Works with `generateText`,
 * `streamText`, `generateObject` and agents, over any provider; tool calls and their results
 * stay together. Each response's `usage.inputTokens` goes to `manager.recordUsage`
 * (`wrapGenerate`, and the `finish` part of a stream); a rejection for length
 * (`context_length_exceeded`, "prompt is too long", HTTP 413) is retried once, compacted against
 * the limit the error reports, with one recovery event; any other error is rethrown unchanged.
 *
 * @example
 * ```ts
 * import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
 * import { openai } from '@ai-sdk/openai';
 * import { CompactManager } from 'agent-compaction';
 * import { compactionMiddleware } from 'agent-compaction/ai-sdk';
 *
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
 * const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: compactionMiddleware(manager, { sessionId: 'chat-42' }) });
 * const { text } = await generateText({ model, tools, messages, stopWhen: stepCountIs(20) });
 * ```
 */
export function compactionMiddleware(
  manager: CompactManager,
  options: CompactionMiddlewareOptions = {},
): LanguageModelMiddleware {
  checkAdapterOptions('compactionMiddleware', manager, options, MIDDLEWARE_OPTIONS);
  const { countTools = true } = options;
  // What each call's compaction started from, for an overflow retry.
  const calls = new WeakMap<object, CallRecord>();
  return {
    specificationVersion: 'v3',
    async transformParams({ params, model }) {
      const sessionId = sessionIdOf(options.sessionId, params);
      const tools = [
        ...(countTools ? callToolSchemas(params.tools) : []),
        ...callResponseSchema(params.responseFormat),
      ];
      const { messages, result } = await compactMessages(manager, sessionId, params.prompt, {
        kind: 'prompt',
        tools,
        ...(model?.provider === undefined ? {} : { provider: model.provider }),
        ...replyTokensOf(params.maxOutputTokens),
        ...(params.abortSignal === undefined ? {} : { signal: params.abortSignal }),
      });
      options.onCompaction?.(result, sessionId);
      const transformed = { ...params, prompt: messages };
      calls.set(transformed, {
        sessionId,
        prompt: params.prompt,
        provider: model?.provider,
        tools,
        sentTokens: result.tokensAfter,
      });
      return transformed;
    },
    async wrapGenerate({ doGenerate, params, model }) {
      const record = calls.get(params);
      try {
        return fedUsage(await doGenerate(), manager, record);
      } catch (error) {
        const retry = await retryParams(manager, params, record, error);
        return fedUsage(await model.doGenerate(retry), manager, record);
      }
    },
    async wrapStream({ doStream, params, model }) {
      const record = calls.get(params);
      let result: Awaited<ReturnType<typeof doStream>>;
      try {
        result = await doStream();
      } catch (error) {
        result = await model.doStream(await retryParams(manager, params, record, error));
      }
      if (!record) return result;
      const feed = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          if (part.type === 'finish') feedV3Usage(manager, record.sessionId, part.usage);
          controller.enqueue(part);
        },
      });
      return { ...result, stream: result.stream.pipeThrough(feed) };
    },
  };
}

type Middleware = Required<LanguageModelMiddleware>;
type GenerateResult = Awaited<ReturnType<Parameters<Middleware['wrapGenerate']>[0]['doGenerate']>>;
type StreamPart =
  Awaited<ReturnType<Parameters<Middleware['wrapStream']>[0]['doStream']>>['stream'] extends ReadableStream<
    infer P
  >
    ? P
    : never;

interface CallRecord {
  sessionId: string;
  prompt: CallOptions['prompt'];
  /** The model's provider (whether tool result media go as text). */
  provider: string | undefined;
  tools: unknown[];
  sentTokens: number;
}

/**
 * Feeds an AI SDK usage object: `inputTokens.total` (cache included) with its `cacheRead` and
 * `cacheWrite`, `outputTokens.total`; or plain numbers (older providers, `cachedInputTokens`).
 */
export function feedV3Usage(manager: CompactManager, sessionId: string, usage: unknown): void {
  const u = usage as
    | { inputTokens?: unknown; outputTokens?: unknown; cachedInputTokens?: unknown }
    | undefined;
  const input = u?.inputTokens as
    | number
    | { total?: unknown; cacheRead?: unknown; cacheWrite?: unknown }
    | undefined;
  const num = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  const total = typeof input === 'number' ? input : num(input?.total);
  if (total === undefined) return;
  const read = typeof input === 'number' ? num(u?.cachedInputTokens) : num(input?.cacheRead);
  const write = typeof input === 'number' ? undefined : num(input?.cacheWrite);
  const output = u?.outputTokens as number | { total?: unknown } | undefined;
  const outputTokens = typeof output === 'number' ? output : num(output?.total);
  // The total holds the cache writes, which `recordUsage` takes beside the input.
  feedUsage(manager, sessionId, {
    inputTokens: Math.max(0, total - (write ?? 0)),
    ...(read === undefined ? {} : { cachedInputTokens: read }),
    ...(write === undefined ? {} : { cacheCreationInputTokens: write }),
    ...(outputTokens === undefined ? {} : { outputTokens }),
  });
}

function fedUsage(
  result: GenerateResult,
  manager: CompactManager,
  record: CallRecord | undefined,
): GenerateResult {
  if (record) feedV3Usage(manager, record.sessionId, result.usage);
  return result;
}

/** The parameters of the one retry after a rejection for length; rethrows anything else. */
async function retryParams(
  manager: CompactManager,
  params: CallOptions,
  record: CallRecord | undefined,
  error: unknown,
): Promise<CallOptions> {
  const overflow = contextOverflowOf(error);
  if (!overflow || !record) throw error;
  const chat = aiSdkToChat(
    record.prompt as unknown as readonly AiSdkMessage[],
    sendsMediaAsText(record.provider),
  );
  try {
    const { result } = await compactForRetry(
      manager,
      record.sessionId,
      chat,
      {
        format: 'openai-chat',
        ...(record.tools.length > 0 ? { tools: record.tools } : {}),
        ...replyTokensOf(params.maxOutputTokens),
        ...(params.abortSignal === undefined ? {} : { signal: params.abortSignal }),
      },
      { overflow, sentTokens: record.sentTokens, integration: 'ai-sdk' },
    );
    return { ...params, prompt: chatToAiSdk(result.messages, 'prompt') as unknown as CallOptions['prompt'] };
  } catch (compactError) {
    // Even the tighter budget cannot hold the request: the provider's error is the one to see.
    if (compactError instanceof CompactError) throw error;
    throw compactError;
  }
}

/** Options of {@link compactionPrepareStep}. */
export interface CompactionPrepareStepOptions {
  /** The manager's session id. */
  sessionId: string;
  /**
   * The `system` prompt (or agent `instructions`) of the call: `prepareStep` never sees it, so
   * pass it here to have it counted.
   */
  system?: string;
  /**
   * The tools to count: the `ToolSet` given to `generateText` / `ToolLoopAgent` (its input
   * schemas read as JSON Schema once per tool set), or schemas as `callToolSchemas` makes them.
   */
  tools?: ToolSet | readonly unknown[];
  /**
   * The call's `maxOutputTokens`: `prepareStep` never sees it, so pass it here to keep the
   * reply's room free below the window (providers refuse a prompt that passes it with the reply).
   */
  replyTokens?: number;
  /** Called after each compaction check. */
  onCompaction?: (result: CompactionResult<unknown>, sessionId: string) => void;
}

/**
 * What {@link compactionPrepareStep} returns: a `prepareStep` that fits every `generateText`,
 * `streamText` and `ToolLoopAgent`, whatever their tools (it can be stored in a variable).
 */
export type CompactionPrepareStep = (options: {
  messages: ModelMessage[];
  steps?: readonly { usage?: { inputTokens?: number | undefined } }[];
}) => Promise<{ messages: ModelMessage[] }>;

/** Whether `tools` are schemas already (or none), rather than a `ToolSet`. */
const isToolList = (
  tools: ToolSet | readonly unknown[] | undefined,
): tools is readonly unknown[] | undefined => tools === undefined || Array.isArray(tools);

/**
 * A `prepareStep` function for `generateText` / `streamText` / `ToolLoopAgent` that compacts
 * the messages of each step (when the model cannot be wrapped, or to compact the step's
 * `ModelMessage[]` rather than the provider prompt). The previous step's reported input tokens
 * go to `manager.recordUsage`. It cannot retry a rejected call: use {@link compactionMiddleware}
 * for overflow recovery.
 *
 * @example
 * ```ts
 * const prepareStep = compactionPrepareStep(manager, { sessionId: 'chat-42', system });
 * await generateText({ model, system, tools, messages, stopWhen: stepCountIs(20), prepareStep });
 * ```
 */
export function compactionPrepareStep(
  manager: CompactManager,
  options: CompactionPrepareStepOptions,
): CompactionPrepareStep {
  checkAdapterOptions('compactionPrepareStep', manager, options, PREPARE_STEP_OPTIONS);
  return async ({ messages, steps }) => {
    const last = steps?.at(-1)?.usage;
    if (last) feedV3Usage(manager, options.sessionId, last);
    const tools = isToolList(options.tools) ? options.tools : await toolSetSchemas(options.tools);
    const { messages: compacted, result } = await compactMessages<ModelMessage>(
      manager,
      options.sessionId,
      messages,
      {
        kind: 'model-messages',
        ...(tools ? { tools } : {}),
        ...(options.system ? { system: options.system } : {}),
        ...replyTokensOf(options.replyTokens),
      },
    );
    options.onCompaction?.(result, options.sessionId);
    return { messages: compacted };
  };
}
