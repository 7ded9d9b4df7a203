import type { LanguageModelMiddleware, ModelMessage, PrepareStepFunction, Tool } from 'ai';
import type { CompactionResult, CompactManager } from '../../core/compact-manager.js';
import { CompactError } from '../../core/errors.js';
import { compactWithEvents } from '../compact-with-events.js';
import { type AiSdkMessage, type AiSdkMessageKind, aiSdkToChat, chatToAiSdk } from './ai-sdk-messages.js';

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
  /** A trace id for the manager's events. */
  traceId?: string;
  /** Aborts a running summarization. */
  signal?: AbortSignal;
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
  const chat = aiSdkToChat(messages as unknown as readonly AiSdkMessage[]);
  const { result } = await compactWithEvents(manager, sessionId, chat, {
    format: 'openai-chat',
    ...(options.tools && options.tools.length > 0 ? { tools: options.tools } : {}),
    ...(options.traceId === undefined ? {} : { traceId: options.traceId }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return {
    messages: chatToAiSdk(result.messages, options.kind ?? 'model-messages') as unknown as M[],
    result: result as CompactionResult<unknown>,
  };
}

/** The function tools of a call as schemas the token counter reads. */
export function callToolSchemas(tools: readonly unknown[] | undefined): unknown[] {
  return (tools ?? []).flatMap((tool) => {
    const t = tool as {
      type?: string;
      name?: string;
      description?: string;
      inputSchema?: unknown;
      parameters?: unknown;
    };
    if (t.type !== undefined && t.type !== 'function') return [];
    if (typeof t.name !== 'string') return [];
    return [
      {
        type: 'function',
        name: t.name,
        description: t.description ?? '',
        parameters: t.inputSchema ?? t.parameters ?? {},
      },
    ];
  });
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

/**
 * A Vercel AI SDK language model middleware that compacts the prompt before every model call
 * (`transformParams`), with the call's tool schemas counted. Works with `generateText`,
 * `streamText` and agents, over any provider; tool calls and their results stay together.
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
  const { countTools = true } = options;
  return {
    specificationVersion: 'v3',
    async transformParams({ params }) {
      const sessionId = sessionIdOf(options.sessionId, params);
      const { messages, result } = await compactMessages(manager, sessionId, params.prompt, {
        kind: 'prompt',
        ...(countTools ? { tools: callToolSchemas(params.tools) } : {}),
        ...(params.abortSignal === undefined ? {} : { signal: params.abortSignal }),
      });
      options.onCompaction?.(result, sessionId);
      return { ...params, prompt: messages };
    },
  };
}

/** Options of {@link compactionPrepareStep}. */
export interface CompactionPrepareStepOptions {
  /** The manager's session id. */
  sessionId: string;
  /** Tool schemas to count (e.g. `callToolSchemas` of your tools' JSON schemas). */
  tools?: readonly unknown[];
  /** Called after each compaction check. */
  onCompaction?: (result: CompactionResult<unknown>, sessionId: string) => void;
}

/**
 * A `prepareStep` function for `generateText` / `streamText` / `ToolLoopAgent` that compacts
 * the messages of each step (when the model cannot be wrapped, or to compact the step's
 * `ModelMessage[]` rather than the provider prompt).
 *
 * @example
 * ```ts
 * await generateText({ model, tools, messages, stopWhen: stepCountIs(20),
 *   prepareStep: compactionPrepareStep(manager, { sessionId: 'chat-42' }) });
 * ```
 */
export function compactionPrepareStep<TOOLS extends Record<string, Tool> = Record<string, Tool>>(
  manager: CompactManager,
  options: CompactionPrepareStepOptions,
): PrepareStepFunction<TOOLS> {
  return async ({ messages }) => {
    const { messages: compacted, result } = await compactMessages<ModelMessage>(
      manager,
      options.sessionId,
      messages,
      {
        kind: 'model-messages',
        ...(options.tools ? { tools: options.tools } : {}),
      },
    );
    options.onCompaction?.(result, options.sessionId);
    return { messages: compacted };
  };
}
