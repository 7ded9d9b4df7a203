import type Anthropic from '@anthropic-ai/sdk';
import { CompactError } from '../../core/errors.js';
import type { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactionResult } from '../../core/manager/manager-options.js';
import type { WithMeta } from '../../core/messages/message.js';
import { checkAdapterOptions } from '../adapter-options.js';
import { compactingMessages, type MessagesCallContext } from './compacting-messages.js';

type CreateParams = Anthropic.Messages.MessageCreateParams;

/**
 * An Anthropic message with the optional `meta` the manager reads (`{ protected: true }` pins
 * it); `meta` is stripped before the request is sent.
 */
export type AnthropicMessage = WithMeta<Anthropic.MessageParam>;

/** Options of {@link withCompaction}. */
export interface WithCompactionOptions {
  /**
   * The manager's session id, one per conversation: a string, or a function of the request
   * (e.g. returning your thread id). Required: there is no shared default.
   */
  sessionId: string | ((params: CreateParams) => string);
  /** Called after each compaction check. */
  onCompaction?: (result: CompactionResult<unknown>, sessionId: string) => void;
  /**
   * Prompt-cache breakpoints (`cache_control`) the wrapper places: after the tools and system
   * prompt, after the compaction summary and on the newest message, 4 at most with the
   * caller's. `'auto'`: only when the request carries none of its own; `true`: beside the
   * caller's; `false`: never.
   * @default 'auto'
   */
  cacheBreakpoints?: 'auto' | boolean;
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
 * Wraps an Anthropic client so that every request that sends messages is compacted by the
 * manager first (system prompt and tool schemas counted; `tool_use` / `tool_result` pairs kept
 * together): `messages.create` (plain, `stream: true`, `.withResponse()`, `.asResponse()`),
 * `messages.stream()`, `messages.parse()` and the same on `beta.messages`. The SDK's return
 * types are untouched. Each response's reported input tokens (cache included) go to
 * `manager.recordUsage`; a rejection for length ("prompt is too long", HTTP 413) is retried
 * once, compacted against the limit the error reports, with one `compact.overflow_recovery`
 * event; any other error surfaces unchanged. Everything else on the client is untouched.
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk';
 * const anthropic = withCompaction(new Anthropic(), manager, { sessionId: threadTs });
 * const reply = await anthropic.messages.create({ model, system, max_tokens: 4096, messages, tools });
 * const stream = anthropic.messages.stream({ model, max_tokens: 4096, messages });
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
  checkAdapterOptions('withCompaction', manager, options, ['sessionId', 'onCompaction', 'cacheBreakpoints']);
  const context: MessagesCallContext = {
    manager,
    sessionId: (params) => sessionIdOf(options.sessionId, params as unknown as CreateParams),
    onCompaction: options.onCompaction,
    cacheBreakpoints: options.cacheBreakpoints,
  };
  const messages = compactingMessages(client.messages, context);
  const original = client as unknown as { beta?: { messages?: object } };
  const betaMessages =
    original.beta?.messages === undefined ? undefined : compactingMessages(original.beta.messages, context);
  const beta =
    original.beta === undefined
      ? undefined
      : new Proxy(original.beta, {
          get(target, property) {
            if (property === 'messages') return betaMessages;
            const value = Reflect.get(target, property, target);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
  return new Proxy(client, {
    get(target, property) {
      if (property === 'messages') return messages;
      if (property === 'beta' && beta !== undefined) return beta;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
