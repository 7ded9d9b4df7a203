/**
 * The three provider endpoints the proxy speaks, and how each one's request body holds its
 * conversation: where the messages are, what counts beside them (system prompt, tools), and
 * how the compacted messages go back into the body.
 */
import type { CompactOptions } from '../core/manager/manager-options.js';
import type { MessageFormat } from '../core/messages/message.js';
import { bodyCountedTools } from '../core/preflight/body/response-schema.js';

/** One endpoint the proxy compacts. */
export interface ProxyRoute {
  /** The path clients call (and the proxy forwards to, under the upstream's base path). */
  readonly path: string;
  /** The wire format of its messages. */
  readonly format: MessageFormat;
  /** The top-level key of the body's conversation. */
  readonly messagesKey: 'messages' | 'input';
  /** The body's conversation, or `undefined` when it holds none the manager can compact. */
  messagesOf(body: Record<string, unknown>): readonly unknown[] | undefined;
  /** What the manager counts beside the messages (system prompt, tool schemas). */
  optionsOf(body: Record<string, unknown>): CompactOptions;
  /** A copy of `body` carrying `messages` instead of its own. */
  withMessages(body: Record<string, unknown>, messages: readonly unknown[]): Record<string, unknown>;
}

/** The tool schemas and the structured-output schema (`response_format`, `text.format`), counted alike. */
const toolsOf = (body: Record<string, unknown>) => bodyCountedTools(body);

const arrayAt = (body: Record<string, unknown>, key: string) =>
  Array.isArray(body[key]) ? (body[key] as unknown[]) : undefined;

/** OpenAI Chat Completions: `messages` (system and developer messages inside), `tools`. */
const OPENAI_CHAT: ProxyRoute = {
  path: '/v1/chat/completions',
  format: 'openai-chat',
  messagesKey: 'messages',
  messagesOf: (body) => arrayAt(body, 'messages'),
  optionsOf: (body) => ({ format: 'openai-chat', ...toolsOf(body) }),
  withMessages: (body, messages) => ({ ...body, messages }),
};

/**
 * OpenAI Responses: `input` (a string input is one message: nothing to compact), `instructions`.
 * A request continuing a response or a conversation stored by the provider
 * (`previous_response_id`, `conversation`) holds only the new items: not the conversation, so
 * not compacted either.
 */
const OPENAI_RESPONSES: ProxyRoute = {
  path: '/v1/responses',
  format: 'openai-responses',
  messagesKey: 'input',
  messagesOf: (body) =>
    body.previous_response_id == null && body.conversation == null ? arrayAt(body, 'input') : undefined,
  optionsOf: (body) => ({
    format: 'openai-responses',
    ...(typeof body.instructions === 'string' ? { system: body.instructions } : {}),
    ...toolsOf(body),
  }),
  withMessages: (body, input) => ({ ...body, input }),
};

/** Anthropic Messages: `messages`, `system` (a string or text blocks), `tools`. */
const ANTHROPIC_MESSAGES: ProxyRoute = {
  path: '/v1/messages',
  format: 'anthropic',
  messagesKey: 'messages',
  messagesOf: (body) => arrayAt(body, 'messages'),
  optionsOf: (body) => ({
    format: 'anthropic',
    ...(typeof body.system === 'string' || Array.isArray(body.system)
      ? { system: body.system as string | unknown[] }
      : {}),
    ...toolsOf(body),
  }),
  withMessages: (body, messages) => ({ ...body, messages }),
};

/** Every endpoint the proxy compacts, by path. */
export const PROXY_ROUTES: readonly ProxyRoute[] = Object.freeze([
  OPENAI_CHAT,
  OPENAI_RESPONSES,
  ANTHROPIC_MESSAGES,
]);
