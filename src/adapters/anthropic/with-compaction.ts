import type Anthropic from '@anthropic-ai/sdk';
import type { CompactionResult, CompactManager } from '../../core/compact-manager.js';
import { CompactError } from '../../core/errors.js';

type CreateParams = Anthropic.Messages.MessageCreateParams;

/** Options of {@link withCompaction}. */
export interface WithCompactionOptions {
  /**
   * The manager's session id, one per conversation: a string, or a function of the request
   * (e.g. returning your thread id). Required: there is no shared default.
   */
  sessionId: string | ((params: CreateParams) => string);
  /** Called after each compaction check. */
  onCompaction?: (result: CompactionResult<unknown>, sessionId: string) => void;
}

function sessionIdOf(option: WithCompactionOptions['sessionId'], params: CreateParams): string {
  const id = typeof option === 'function' ? option(params) : option;
  if (typeof id === 'string' && id !== '') return id;
  // Never a shared default (nor the user id, which spans a user's threads): one
  // conversation's summary must not reach another's request.
  throw new CompactError(
    'invalid_config',
    'withCompaction: pass { sessionId } (a string or a function of the request, e.g. your thread id)',
    {
      issues: [{ path: ['sessionId'], message: 'is required' }],
    },
  );
}

/**
 * Wraps an Anthropic client so that every `messages.create` call is compacted by the manager
 * first (system prompt and tool schemas counted; `tool_use` / `tool_result` pairs kept
 * together). Everything else on the client is untouched. The wrapped `create` returns a plain
 * promise (`.withResponse()` is not available on it); streaming with `stream: true` works.
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk';
 * const anthropic = withCompaction(new Anthropic(), manager, { sessionId: threadTs });
 * const reply = await anthropic.messages.create({ model, system, max_tokens: 4096, messages, tools });
 * ```
 */
export function withCompaction<C extends Pick<Anthropic, 'messages'>>(
  client: C,
  manager: CompactManager,
  options: WithCompactionOptions,
): C {
  if (!client?.messages || typeof client.messages.create !== 'function') {
    throw new CompactError('invalid_config', 'withCompaction: client must be an Anthropic client');
  }
  if (options?.sessionId === undefined || options.sessionId === '') {
    throw new CompactError(
      'invalid_config',
      'withCompaction: pass { sessionId } (a string or a function of the request, e.g. your thread id)',
      {
        issues: [{ path: ['sessionId'], message: 'is required' }],
      },
    );
  }
  const messages = client.messages;
  const create = async (params: CreateParams, requestOptions?: Anthropic.RequestOptions) => {
    const sessionId = sessionIdOf(options.sessionId, params);
    const result = await manager.compact(sessionId, params.messages, {
      format: 'anthropic',
      ...(params.system === undefined ? {} : { system: params.system }),
      ...(params.tools ? { tools: params.tools } : {}),
      ...(requestOptions?.signal ? { signal: requestOptions.signal } : {}),
    });
    options.onCompaction?.(result as CompactionResult<unknown>, sessionId);
    return messages.create({ ...params, messages: result.messages } as CreateParams, requestOptions);
  };
  const wrappedMessages = new Proxy(messages, {
    get(target, property) {
      if (property === 'create') return create;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return new Proxy(client, {
    get(target, property) {
      if (property === 'messages') return wrappedMessages;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
