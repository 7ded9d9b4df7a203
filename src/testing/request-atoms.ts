/**
 * The pieces of a request the soundness check compares, independent of the wire format: a
 * request body (or message list) of OpenAI Chat, OpenAI Responses, Anthropic Messages or the
 * library's own `CompactMessage` form is parsed with the library's codecs (parsing only: every
 * rule of the check is written in assert-sound-request.ts), then flattened into atoms (a text,
 * one tool call, one tool result), so a Chat assistant with two calls and the three Responses
 * items that say the same compare equal.
 */
import { detectFormat, MESSAGE_CODECS } from '../core/messages/formats/detect-format.js';
import type { CompactMessage, MessageFormat } from '../core/messages/message.js';
import { bodyReplyTokens } from '../core/preflight/body/reply-tokens.js';
import { bodyResponseSchema, withResponseSchema } from '../core/preflight/body/response-schema.js';

/** The wire formats the check reads: the three providers' and the library's own `CompactMessage` form. */
export type SoundRequestFormat = MessageFormat | 'compact';

/** One message of a request or history, as the check reads it. */
export interface ReadMessage {
  role: string;
  kind: string;
  text: string;
  toolCalls: readonly { id: string; name: string; arguments: string }[];
  toolResults: readonly { callId: string; output: string }[];
  /** The wire object (without `meta`). */
  wire: unknown;
}

/** A request's messages, what it sends beside them, and its format. */
export interface ReadRequest {
  format: SoundRequestFormat;
  messages: ReadMessage[];
  system?: unknown;
  /**
   * The tool schemas, with the structured-output schema the body sends (`response_format`,
   * `text.format`, `output_format`) last as `{response_format: schema}`.
   */
  tools?: readonly unknown[];
  /** The reply the body asks for (`max_tokens`, `max_completion_tokens`, `max_output_tokens`). */
  replyTokens?: number;
}

/** The smallest piece compared: a text, a tool call or a tool result, with its message's index. */
export interface Atom {
  kind: 'text' | 'call' | 'result';
  role: string;
  text: string;
  id?: string;
  name?: string;
  /** A call's arguments as sent (`text` is their canonical JSON). */
  raw?: string;
  message: number;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function withoutMeta(raw: unknown): unknown {
  if (!isObject(raw) || !('meta' in raw)) return raw;
  const { meta: _meta, ...rest } = raw;
  return rest;
}

function isCompactForm(messages: readonly unknown[]): boolean {
  const first = messages[0];
  return isObject(first) && Array.isArray(first.toolCalls) && typeof first.text === 'string';
}

/** The format of a message list: `format` when given, else detected (`compact` for `CompactMessage`s). */
export function formatOfMessages(
  messages: readonly unknown[],
  format: SoundRequestFormat | undefined,
): SoundRequestFormat {
  if (format !== undefined) return format;
  return isCompactForm(messages) ? 'compact' : detectFormat(messages);
}

/** Parses a message list of one format. */
export function readMessages(messages: readonly unknown[], format: SoundRequestFormat): ReadMessage[] {
  if (format === 'compact') {
    return (messages as readonly CompactMessage[]).map((message) => ({
      role: message.role,
      kind: message.kind,
      text: message.text,
      toolCalls: message.toolCalls,
      toolResults: message.toolResults,
      wire: message.raw === undefined ? message : withoutMeta(message.raw),
    }));
  }
  const codec = MESSAGE_CODECS[format];
  return messages.map((raw, index) => {
    const parsed = codec.parse(raw, index);
    return {
      role: parsed.role,
      kind: parsed.kind === 'other' ? `other:${parsed.itemType ?? ''}` : parsed.kind,
      text: parsed.text,
      toolCalls: parsed.toolCalls,
      toolResults: parsed.toolResults,
      wire: withoutMeta(raw),
    };
  });
}

/**
 * Reads a request: a provider body (`{messages, system?, tools?}`, `{input, instructions?,
 * tools?}`) or a bare message list.
 */
export function readRequestBody(request: unknown, format: SoundRequestFormat | undefined): ReadRequest {
  if (Array.isArray(request)) {
    const found = formatOfMessages(request, format);
    return { format: found, messages: readMessages(request, found) };
  }
  const body = isObject(request) ? request : {};
  if ('input' in body || format === 'openai-responses') {
    const input =
      typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input as unknown[]);
    const read: ReadRequest = {
      format: 'openai-responses',
      messages: readMessages(Array.isArray(input) ? input : [], 'openai-responses'),
    };
    if (body.instructions !== undefined) read.system = body.instructions;
    return withReply(withTools(read, body), body);
  }
  const list = Array.isArray(body.messages) ? body.messages : [];
  // A top-level `system` is Anthropic's; Chat carries its system prompt in the messages.
  const found = format ?? (body.system !== undefined ? 'anthropic' : formatOfMessages(list, undefined));
  const read: ReadRequest = { format: found, messages: readMessages(list, found) };
  if (body.system !== undefined) read.system = body.system;
  return withReply(withTools(read, body), body);
}

/** The request with its tool schemas and its structured-output schema, counted alike. */
function withTools(read: ReadRequest, body: Record<string, unknown>): ReadRequest {
  const tools = withResponseSchema(
    Array.isArray(body.tools) ? body.tools : undefined,
    bodyResponseSchema(body),
  );
  if (tools) read.tools = tools;
  return read;
}

/** The request with the largest reply size its body asks for, if any. */
function withReply(read: ReadRequest, body: Record<string, unknown>): ReadRequest {
  const { replyTokens } = bodyReplyTokens(body);
  if (replyTokens !== undefined) read.replyTokens = replyTokens;
  return read;
}

/** Tool-call arguments in one spelling: JSON re-serialized with sorted keys, else as given. */
export function canonicalArguments(text: string): string {
  try {
    return canonicalJson(JSON.parse(text));
  } catch {
    return text;
  }
}

/** JSON with object keys sorted, so two spellings of one value compare equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The atoms of messages, in order. */
export function atomsOf(messages: readonly ReadMessage[]): Atom[] {
  const atoms: Atom[] = [];
  messages.forEach((message, index) => {
    const hasTools = message.toolCalls.length > 0 || message.toolResults.length > 0;
    // The role `tool` of Chat and a user turn of Anthropic results read as the same kind of text.
    const role = message.role === 'tool' ? 'user' : message.role;
    if (message.text.trim() !== '' || !hasTools)
      atoms.push({
        kind: 'text',
        role: `${role}:${message.kind}`,
        text: message.text.trim(),
        message: index,
      });
    for (const call of message.toolCalls)
      atoms.push({
        kind: 'call',
        role: 'assistant',
        id: call.id,
        name: call.name,
        text: canonicalArguments(call.arguments),
        raw: call.arguments,
        message: index,
      });
    for (const result of message.toolResults)
      atoms.push({
        kind: 'result',
        role: 'tool',
        id: result.callId,
        text: result.output.trim(),
        message: index,
      });
  });
  return atoms;
}
