import type { BaseMessage } from '@langchain/core/messages';
import type { AgentMiddleware, ModelRequest } from 'langchain';
import { CompactError } from '../../core/errors.js';
import type { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactionResult, CompactOptions } from '../../core/manager/manager-options.js';
import { replyTokensOf } from '../../core/preflight/body/reply-tokens.js';
import { QUICK_FROM } from '../../core/preflight/quick/quick-records.js';
import { AS_GIVEN, LAZY_HISTORY, type LazyHistory } from '../../core/preflight/quick/quick-resume.js';
import { checkAdapterOptions } from '../adapter-options.js';
import { type ContextOverflow, compactForRetry, contextOverflowOf, feedUsage } from '../overflow-recovery.js';
import { ConversationChat, type ConversationLease } from './conversation-chat.js';
import {
  chatToLangChain,
  chatToLangChainInPlace,
  contentText,
  type LangChainMessageClasses,
} from './langchain-messages.js';
import { responseFormatSchemas } from './response-format-schema.js';
import { summaryFirst } from './summary-first.js';

/** The runtime a LangChain middleware sees (`request.runtime`). */
export type LangChainRuntime = ModelRequest['runtime'];

/** Options of {@link compactionMiddleware}. */
export interface CompactionMiddlewareOptions {
  /**
   * The manager's session id: a string, or a function of the model request and its runtime
   * (e.g. reading `runtime.context`). Use one id per conversation.
   * @default `runtime.configurable.thread_id` (the checkpointer's thread); without either, the call fails (there is no shared default)
   */
  sessionId?: string | ((request: ModelRequest, runtime: LangChainRuntime) => string | Promise<string>);
  /**
   * Count the bound tools' schemas as part of the request.
   * @default true
   */
  countTools?: boolean;
  /**
   * The middleware's name in the agent (LangChain requires names to be unique per agent).
   * @default 'AgentCompactionMiddleware'
   */
  name?: string;
  /**
   * Called after each compaction check (for logging or status displays), not for the retry
   * after a context-length error (its `compact.overflow_recovery` event reports it).
   * `result.messages` are in the library's OpenAI Chat form, not LangChain messages.
   */
  onCompaction?: (result: CompactionResult<unknown>, sessionId: string) => void;
}

/** The default {@link CompactionMiddlewareOptions.name}. */
export const DEFAULT_MIDDLEWARE_NAME = 'AgentCompactionMiddleware';

function missingCore(error: unknown): CompactError {
  return new CompactError('missing_dependency', 'install @langchain/core: npm i @langchain/core langchain', {
    cause: error,
  });
}

let classesPromise: Promise<LangChainMessageClasses> | undefined;

/** `@langchain/core/messages`, loaded on the first model call (never by `import`). */
function messageClasses(): Promise<LangChainMessageClasses> {
  classesPromise ??= import('@langchain/core/messages').catch((error: unknown) => {
    classesPromise = undefined;
    throw missingCore(error);
  });
  return classesPromise;
}

const toolSchemas = new WeakMap<object, unknown>();

/**
 * The agent's tools as OpenAI function schemas the token counter reads (`convertToOpenAITool`
 * of `@langchain/core`); provider tools (plain objects) are counted as they are. One conversion
 * per tool object.
 */
export async function langChainToolSchemas(tools: readonly unknown[]): Promise<unknown[]> {
  if (tools.length === 0) return [];
  const { convertToOpenAITool } = await import('@langchain/core/utils/function_calling').catch(
    (error: unknown) => {
      throw missingCore(error);
    },
  );
  return tools.map((tool) => {
    if (tool === null || typeof tool !== 'object') return tool;
    let schema = toolSchemas.get(tool);
    if (schema === undefined) {
      try {
        schema = convertToOpenAITool(tool as Parameters<typeof convertToOpenAITool>[0]);
      } catch {
        const t = tool as { name?: unknown; description?: unknown };
        schema = { type: 'function', function: { name: String(t.name), description: t.description ?? '' } };
      }
      toolSchemas.set(tool, schema);
    }
    return schema;
  });
}

/**
 * Feeds a LangChain `usage_metadata` to `manager.recordUsage`: `input_tokens` (the whole input,
 * cache included, as LangChain reports it for every provider), `input_token_details.cache_read`
 * and `cache_creation`, `output_tokens`. Does nothing without `input_tokens`.
 */
export function feedLangChainUsage(manager: CompactManager, sessionId: string, usage: unknown): void {
  const u = usage as
    | {
        input_tokens?: unknown;
        output_tokens?: unknown;
        input_token_details?: { cache_read?: unknown; cache_creation?: unknown };
      }
    | undefined;
  const num = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  const total = num(u?.input_tokens);
  if (total === undefined) return;
  const read = num(u?.input_token_details?.cache_read);
  const write = num(u?.input_token_details?.cache_creation);
  const output = num(u?.output_tokens);
  // The total holds the cache writes, which `recordUsage` takes beside the input.
  feedUsage(manager, sessionId, {
    inputTokens: Math.max(0, total - (write ?? 0)),
    ...(read === undefined ? {} : { cachedInputTokens: read }),
    ...(write === undefined ? {} : { cacheCreationInputTokens: write }),
    ...(output === undefined ? {} : { outputTokens: output }),
  });
}

/**
 * A provider's rejection for length, looked for along the error's `cause` chain: LangChain wraps
 * it (`ContextOverflowError` over the SDK's error, `MiddlewareError` over an inner middleware's).
 */
export function langChainOverflowOf(error: unknown): ContextOverflow | undefined {
  let found: ContextOverflow | undefined;
  let current = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const e = current as { name?: unknown; message?: unknown; cause?: unknown };
    const overflow =
      contextOverflowOf(current) ??
      (e.name === 'ContextOverflowError' ? { message: String(e.message ?? '') } : undefined);
    // The outer error names the overflow; the inner ones add what they know (status, figures).
    if (overflow) found = { ...overflow, ...found };
    current = e.cause;
  }
  return found;
}

async function resolveSessionId(
  option: CompactionMiddlewareOptions['sessionId'],
  request: ModelRequest,
): Promise<string> {
  if (typeof option === 'function') return option(request, request.runtime);
  if (typeof option === 'string') return option;
  const thread = request.runtime?.configurable?.thread_id;
  if (typeof thread === 'string' && thread !== '') return thread;
  // Never a shared default: one conversation's summary must not reach another's request.
  throw new CompactError(
    'invalid_config',
    'compactionMiddleware: no session id; pass { sessionId } (a string or a function of the request) or run the agent with configurable.thread_id',
    { issues: [{ path: ['sessionId'], message: 'is required' }] },
  );
}

/** What one model call compacted, for the usage feed and an overflow retry. */
interface CallPlan {
  sessionId: string;
  /** The call's messages in Chat form (converted when needed, after a quick first call). */
  chat: unknown[] | (() => Promise<unknown[]>);
  options: CompactOptions;
  sentTokens: number;
}

async function compactCall(
  manager: CompactManager,
  request: ModelRequest,
  options: CompactionMiddlewareOptions,
  source: ConversationLease | LazyHistory,
): Promise<{ messages: BaseMessage[]; plan: CallPlan }> {
  const sessionId = await resolveSessionId(options.sessionId, request);
  const system = contentText(request.systemMessage?.content ?? request.systemPrompt ?? '');
  const tools = [
    ...(options.countTools === false ? [] : await langChainToolSchemas(request.tools ?? [])),
    ...responseFormatSchemas((request as { responseFormat?: unknown }).responseFormat),
  ];
  const signal = request.runtime?.signal;
  const compactOptions: CompactOptions = {
    format: 'openai-chat',
    ...(system === '' ? {} : { system }),
    ...(tools.length > 0 ? { tools } : {}),
    ...replyTokensOf(
      request.modelSettings?.maxTokens,
      request.modelSettings?.max_tokens,
      (request.model as { maxTokens?: unknown } | undefined)?.maxTokens,
    ),
    ...(signal ? { signal } : {}),
  };
  const classes = await messageClasses();
  if ('all' in source) {
    // A first call of a long conversation: converted only as far as the manager reads it.
    const lazyOptions: CompactOptions = Object.assign({ ...compactOptions }, { [LAZY_HISTORY]: source });
    const lazyResult = await manager.compact<unknown>(sessionId, [], lazyOptions);
    const lazyPlan = {
      sessionId,
      chat: () => source.all(),
      options: compactOptions,
      sentTokens: lazyResult.tokensAfter,
    };
    // Sent as given: the caller's own messages (a message sent without its `meta` is the same one).
    if (AS_GIVEN in lazyResult) return { messages: [...request.messages], plan: lazyPlan };
    return { messages: chatToLangChainInPlace(lazyResult.messages, classes), plan: lazyPlan };
  }
  const { chat, back } = source;
  const result = await manager.compact<unknown>(sessionId, chat, compactOptions);
  const plan = { sessionId, chat, options: compactOptions, sentTokens: result.tokensAfter };
  if (options.onCompaction) {
    options.onCompaction(result, sessionId);
    return { messages: chatToLangChain(result.messages, classes), plan };
  }
  // The result's array is ours: converted where it lies, not copied once more.
  return { messages: await back(result.messages, classes), plan };
}

/** The messages of the one retry after a rejection for length; rethrows anything else. */
async function retryMessages(
  manager: CompactManager,
  plan: CallPlan,
  error: unknown,
): Promise<BaseMessage[]> {
  const overflow = langChainOverflowOf(error);
  if (!overflow) throw error;
  try {
    const chat = typeof plan.chat === 'function' ? await plan.chat() : plan.chat;
    const { result } = await compactForRetry(manager, plan.sessionId, chat, plan.options, {
      overflow,
      sentTokens: plan.sentTokens,
      integration: 'langchain',
    });
    return chatToLangChain(result.messages, await messageClasses());
  } catch (compactError) {
    // Even the tighter budget cannot hold the request: the provider's error is the one to see.
    if (compactError instanceof CompactError) throw error;
    throw compactError;
  }
}

/**
 * A LangChain.js v1 agent middleware (`createAgent({ middleware: [...] })`) that compacts the
 * messages of every model call (`wrapModelCall`): the model sees pinned messages, one rolling
 * summary and the recent turns with whole tool call/result pairs, counted with the system prompt
 * and the bound tools' schemas. The agent's state keeps the full history; kept messages are your
 * own objects. Each response's `usage_metadata` goes to `manager.recordUsage`; a rejection for
 * length (`context_length_exceeded`, "prompt is too long", HTTP 413, LangChain's
 * `ContextOverflowError`) is retried once, compacted against the limit the error reports, with
 * one `compact.overflow_recovery` event; any other error is rethrown unchanged.
 *
 * `langchain` is never imported at runtime; `@langchain/core/messages` loads on the first call.
 *
 * @example
 * ```ts
 * import { createAgent } from 'langchain';
 * import { ChatOpenAI } from '@langchain/openai';
 * import { CompactManager } from 'agent-compaction';
 * import { compactionMiddleware } from 'agent-compaction/langchain';
 *
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
 * const agent = createAgent({
 *   model: new ChatOpenAI({ model: 'gpt-4o' }),
 *   tools,
 *   systemPrompt: 'You are a coding agent.',
 *   middleware: [compactionMiddleware(manager, { sessionId: 'chat-42' })],
 * });
 * const result = await agent.invoke({ messages: [{ role: 'user', content: 'Fix the tests.' }] });
 * ```
 */
export function compactionMiddleware(
  manager: CompactManager,
  options: CompactionMiddlewareOptions = {},
): AgentMiddleware {
  checkAdapterOptions('compactionMiddleware', manager, options, [
    'sessionId',
    'countTools',
    'name',
    'onCompaction',
  ]);
  const conversations = new ConversationChat();
  const wrapModelCall: NonNullable<AgentMiddleware['wrapModelCall']> = async (request, handler) => {
    // Only the messages not seen on an earlier call are converted (the state grows by appending);
    // a first call of a long conversation converts what the manager reads (a quick first call
    // of a known session reads a few).
    const lazy =
      options.onCompaction === undefined &&
      request.messages.length >= QUICK_FROM &&
      !conversations.knows(request.messages);
    const lease = lazy ? undefined : await conversations.toChatInSlices(request.messages);
    try {
      const source = lease ?? conversations.lazy(request.messages);
      const { messages, plan } = await compactCall(manager, request, options, source);
      let response: Awaited<ReturnType<typeof handler>>;
      try {
        response = await handler({ ...request, messages: summaryFirst(messages) });
      } catch (error) {
        const retry = await retryMessages(manager, plan, error);
        response = await handler({ ...request, messages: summaryFirst(retry) });
      }
      feedLangChainUsage(manager, plan.sessionId, (response as { usage_metadata?: unknown }).usage_metadata);
      return response;
    } finally {
      lease?.release();
    }
  };
  return {
    // What `createMiddleware` adds (a registered symbol), so `langchain` need not be loaded.
    [Symbol.for('AgentMiddleware')]: true,
    name: options.name ?? DEFAULT_MIDDLEWARE_NAME,
    wrapModelCall,
  } as AgentMiddleware;
}
