import type { AgentInputItem, Model, ModelProvider, ModelRequest, ModelResponse } from '@openai/agents';
import { isCompactError } from '../../core/errors.js';
import type { CompactManager } from '../../core/manager/compact-manager.js';
import { responsesSummaryFirst } from '../../core/messages/summary-first.js';
import { replyTokensOf } from '../../core/preflight/body/reply-tokens.js';
import { compactForRetry, contextOverflowOf, feedUsage } from '../overflow-recovery.js';

/** What an input filter compacted for one model call (found again by the request's last item). */
export interface FilteredCall {
  manager: CompactManager;
  sessionId: string;
  /** The items the filter received (the run's input before compaction). */
  input: readonly AgentInputItem[];
  instructions?: string;
  tools?: readonly unknown[];
  /** The compacted request as the manager counted it. */
  sentTokens: number;
}

// The runner clones the filter's items before the model sees them: calls are found again by
// the content of the last item sent, among the most recent ones.
const calls = new Map<string, FilteredCall>();
const REMEMBERED_CALLS = 512;

function keyOf(items: readonly unknown[]): string | undefined {
  const last = items.at(-1);
  if (last === null || typeof last !== 'object') return undefined;
  try {
    return `${items.length}\u0000${JSON.stringify(last)}`;
  } catch {
    return undefined;
  }
}

/** Remembers a filtered call under what it sends (its length and last item). */
export function rememberFilteredCall(sent: readonly unknown[], call: FilteredCall): void {
  const key = keyOf(sent);
  if (key === undefined) return;
  calls.delete(key);
  calls.set(key, call);
  if (calls.size > REMEMBERED_CALLS) calls.delete(calls.keys().next().value as string);
}

function filteredCallOf(request: ModelRequest): FilteredCall | undefined {
  if (!Array.isArray(request.input)) return undefined;
  const key = keyOf(request.input);
  return key === undefined ? undefined : calls.get(key);
}

function feedAgentsUsage(call: FilteredCall | undefined, usage: unknown): void {
  if (!call || usage === null || typeof usage !== 'object') return;
  const u = usage as {
    inputTokens?: unknown;
    input_tokens?: unknown;
    outputTokens?: unknown;
    inputTokensDetails?: unknown;
  };
  const input = typeof u.inputTokens === 'number' ? u.inputTokens : u.input_tokens;
  if (typeof input !== 'number') return;
  // The SDK's Usage keeps Responses' `input_tokens_details` as one record per request.
  const details = Array.isArray(u.inputTokensDetails) ? u.inputTokensDetails : [u.inputTokensDetails];
  let cached = 0;
  for (const entry of details) {
    const value = (entry as { cached_tokens?: unknown } | undefined)?.cached_tokens;
    if (typeof value === 'number') cached += value;
  }
  feedUsage(call.manager, call.sessionId, {
    inputTokens: input,
    ...(cached > 0 ? { cachedInputTokens: cached } : {}),
    ...(typeof u.outputTokens === 'number' ? { outputTokens: u.outputTokens } : {}),
  });
}

/** The request of the one retry after a rejection for length; rethrows anything else. */
async function retryRequest(
  request: ModelRequest,
  call: FilteredCall | undefined,
  error: unknown,
): Promise<ModelRequest> {
  const overflow = contextOverflowOf(error);
  if (!overflow || !call) throw error;
  try {
    const { result } = await compactForRetry(
      call.manager,
      call.sessionId,
      call.input,
      {
        format: 'openai-responses',
        ...(call.instructions ? { system: call.instructions } : {}),
        ...(call.tools ? { tools: call.tools } : {}),
        ...replyTokensOf(request.modelSettings?.maxTokens),
        ...(request.signal ? { signal: request.signal } : {}),
      },
      { overflow, sentTokens: call.sentTokens, integration: 'openai-agents' },
    );
    const input = responsesSummaryFirst(result.messages, result.summary?.text) as typeof result.messages;
    return { ...request, input };
  } catch (compactError) {
    // Even the tighter budget cannot hold the request: the provider's error is the one to see.
    if (isCompactError(compactError)) throw error;
    throw compactError;
  }
}

/**
 * A `Model` that passes each response's reported input tokens to the manager and, when the
 * provider rejects a call for length, compacts it again against the limit the error reports and
 * retries once. It acts on calls a {@link compactionInputFilter} prepared (it finds the filter's
 * session through the request's items); other calls pass through untouched.
 */
export class CompactionModel implements Model {
  /** The wrapped model. */
  readonly model: Model;

  constructor(model: Model) {
    this.model = model;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const call = filteredCallOf(request);
    let response: ModelResponse;
    try {
      response = await this.model.getResponse(request);
    } catch (error) {
      response = await this.model.getResponse(await retryRequest(request, call, error));
    }
    feedAgentsUsage(call, response.usage);
    return response;
  }

  async *getStreamedResponse(request: ModelRequest): ReturnType<Model['getStreamedResponse']> {
    const call = filteredCallOf(request);
    let started = false;
    let retry: ModelRequest | undefined;
    try {
      for await (const event of this.model.getStreamedResponse(request)) {
        started = true;
        if (event.type === 'response_done') feedAgentsUsage(call, event.response.usage);
        yield event;
      }
    } catch (error) {
      // A stream that already produced events cannot be replayed.
      if (started) throw error;
      retry = await retryRequest(request, call, error);
    }
    if (!retry) return;
    for await (const event of this.model.getStreamedResponse(retry)) {
      if (event.type === 'response_done') feedAgentsUsage(call, event.response.usage);
      yield event;
    }
  }
}

/**
 * A `ModelProvider` whose models are {@link CompactionModel}s: with `compactionInputFilter` (or
 * `session.runOptions()`), every response's usage reaches the manager and a rejection for
 * length is retried once, compacted against the limit the error reports.
 *
 * @example
 * ```ts
 * const runner = new Runner({ modelProvider: new CompactionModelProvider(new OpenAIProvider()) });
 * await runner.run(agent, 'Hello', session.runOptions());
 * ```
 */
export class CompactionModelProvider implements ModelProvider {
  /** The wrapped provider. */
  readonly provider: ModelProvider;

  constructor(provider: ModelProvider) {
    this.provider = provider;
  }

  async getModel(modelName?: string): Promise<Model> {
    return new CompactionModel(await this.provider.getModel(modelName));
  }
}
