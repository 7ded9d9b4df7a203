/**
 * Conversion between LangChain.js messages (`HumanMessage`, `AIMessage` with `tool_calls`,
 * `ToolMessage`, `SystemMessage`) and OpenAI Chat messages, the format the manager compacts.
 * Each converted message carries a reference to its origin, so every message the manager keeps
 * comes back as the caller's own LangChain object: ids, metadata and content blocks the
 * conversion does not understand survive untouched. Only a message the manager rewrote (a
 * cleared tool output, shortened call arguments, a cut text) and the summary are new objects.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { textAfterReasoning } from '../reasoning-head.js';
import { markSummary } from './summary-first.js';

/** The classes of `@langchain/core/messages` the conversion back builds new messages with. */
export type LangChainMessageClasses = Pick<
  typeof import('@langchain/core/messages'),
  'AIMessage' | 'HumanMessage' | 'SystemMessage' | 'ToolMessage'
>;

/** The `additional_kwargs` key under which a message can be marked (`{ protected: true }`). */
export const LANGCHAIN_META_KEY = 'agentCompaction';

const ORIGIN = Symbol('agent-compaction.langchain-origin');

type Json = Record<string, unknown>;
type ChatMessage = Record<string | symbol, unknown>;

/** The fields of a LangChain message the conversion reads (any copy of `@langchain/core`). */
interface LangChainFields {
  type?: string;
  role?: string;
  content: unknown;
  id?: string;
  name?: string;
  additional_kwargs?: Json;
  response_metadata?: Json;
  tool_calls?: { id?: string; name: string; args?: unknown; type?: string }[];
  invalid_tool_calls?: unknown[];
  usage_metadata?: unknown;
  tool_call_id?: string;
  artifact?: unknown;
  status?: string;
  metadata?: Json;
}

interface Origin {
  message: BaseMessage;
  /** The converted content and call arguments, to tell a rewrite by the manager. */
  content: unknown;
  args: string[];
}

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The kind of a message: `type` (v1), else `_getType()` (older copies). */
function typeOf(message: LangChainFields): string {
  if (typeof message.type === 'string') return message.type;
  const getType = (message as { _getType?: () => string })._getType;
  return typeof getType === 'function' ? getType.call(message) : 'human';
}

/** Content blocks the OpenAI Chat format carries as `tool_calls`, not as content. */
const CALL_BLOCKS = new Set(['tool_use', 'tool_call', 'tool_call_chunk', 'function_call']);

function imagePart(block: Json): Json | undefined {
  if (block.type === 'image_url') {
    const url = block.image_url;
    return { type: 'image_url', image_url: typeof url === 'string' ? { url } : url };
  }
  if (block.type !== 'image') return undefined;
  if (typeof block.url === 'string') return { type: 'image_url', image_url: { url: block.url } };
  const data = block.data;
  if (typeof data !== 'string') return undefined;
  const mime = block.mimeType ?? block.mime_type ?? 'image/png';
  return { type: 'image_url', image_url: { url: `data:${String(mime)};base64,${data}` } };
}

/**
 * A LangChain content value as OpenAI Chat content: a string stays a string; text, reasoning
 * and images become parts the counter reads; Chat's own media parts go along as they are;
 * any other block (LangChain's content blocks are open-ended) is counted as its type name,
 * `[x-custom]`, since the Chat format rejects part types it does not know. Tool-call blocks
 * are left out on assistant messages, which carry them as `tool_calls`.
 */
function chatContent(content: unknown, assistant: boolean): unknown {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : String(content);
  const parts: unknown[] = [];
  for (const block of content as unknown[]) {
    if (typeof block === 'string') {
      parts.push({ type: 'text', text: block });
      continue;
    }
    if (!isObject(block)) continue;
    if (assistant && CALL_BLOCKS.has(String(block.type))) continue;
    if (typeof block.text === 'string') {
      parts.push({ type: 'text', text: block.text });
      continue;
    }
    const reasoning = block.reasoning ?? block.thinking;
    if (typeof reasoning === 'string') {
      parts.push({ type: 'text', text: reasoning });
      continue;
    }
    const image = imagePart(block);
    if (image) parts.push(image);
    else if (block.type === 'input_audio' || block.type === 'file') parts.push(block);
    else parts.push({ type: 'text', text: `[${String(block.type)}]` });
  }
  const allText = parts.every((part) => (part as Json).type === 'text');
  return allText ? parts.map((part) => (part as { text: string }).text).join('\n') : parts;
}

function chatRole(message: LangChainFields, type: string): string {
  switch (type) {
    case 'human':
      return 'user';
    case 'ai':
      return 'assistant';
    case 'tool':
      return 'tool';
    case 'system':
      return message.additional_kwargs?.__openai_role__ === 'developer' ? 'developer' : 'system';
    case 'developer':
      return 'developer';
    case 'generic': {
      const role = message.role;
      if (role === 'assistant' || role === 'ai') return 'assistant';
      if (role === 'system' || role === 'developer') return role;
      return 'user';
    }
    default:
      // Function messages and unknown kinds travel as user text: never as an unpaired result.
      return 'user';
  }
}

/**
 * The encrypted reasoning an AI message goes back with through the Responses API: its
 * `additional_kwargs.reasoning`, or the reasoning items of the output it is sent back as
 * (`response_metadata.output`), as `{ encrypted_content }` objects counted by their length.
 */
function encryptedReasoning(m: LangChainFields): { encrypted_content: string }[] {
  const output = m.response_metadata?.output;
  const items = Array.isArray(output) ? output : [m.additional_kwargs?.reasoning];
  return items.flatMap((item) => {
    const data = isObject(item) && item.type === 'reasoning' ? item.encrypted_content : undefined;
    return typeof data === 'string' && data !== '' ? [{ encrypted_content: data }] : [];
  });
}

/**
 * The `data` of an AI message's Anthropic `redacted_thinking` blocks, sent back with it and
 * counted by the provider, as `{ encrypted_content }` objects counted by their length.
 */
function redactedThinking(content: unknown): { encrypted_content: string }[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((block) =>
    isObject(block) &&
    block.type === 'redacted_thinking' &&
    typeof block.data === 'string' &&
    block.data !== ''
      ? [{ encrypted_content: block.data }]
      : [],
  );
}

function convertMessage(message: BaseMessage): ChatMessage {
  const m = message as unknown as LangChainFields;
  const type = typeOf(m);
  const role = chatRole(m, type);
  const chat: ChatMessage = { role, content: chatContent(m.content, role === 'assistant') };
  if (role === 'tool') chat.tool_call_id = String(m.tool_call_id ?? '');
  // Chat models send the name (createAgent names its AI messages): it is counted.
  if (typeof m.name === 'string' && m.name !== '') chat.name = m.name;
  const calls = role === 'assistant' ? (m.tool_calls ?? []) : [];
  if (calls.length > 0) {
    chat.tool_calls = calls.map((call) => ({
      id: String(call.id ?? ''),
      type: 'function',
      function: { name: String(call.name), arguments: JSON.stringify(call.args ?? {}) },
    }));
  }
  const meta = m.additional_kwargs?.[LANGCHAIN_META_KEY];
  if (isObject(meta)) chat.meta = { ...meta };
  const encrypted = role === 'assistant' ? [...encryptedReasoning(m), ...redactedThinking(m.content)] : [];
  // Never sent (the caller's message is): read by the counter as encrypted reasoning.
  if (encrypted.length > 0) chat.reasoning = encrypted;
  const origin: Origin = {
    message,
    content: chat.content,
    args: calls.length > 0 ? (chat.tool_calls as ChatToolCall[]).map((call) => call.function.arguments) : [],
  };
  Object.defineProperty(chat, ORIGIN, { value: origin, enumerable: true });
  return chat;
}

interface ChatToolCall {
  id: string;
  function: { name: string; arguments: string };
}

const conversions = new WeakMap<object, { content: unknown; calls: unknown; chat: ChatMessage }>();

/**
 * Converts LangChain messages to OpenAI Chat messages for the manager: `AIMessage.tool_calls`
 * become `tool_calls`, a `ToolMessage` a `role: "tool"` message with its `tool_call_id`.
 * `additional_kwargs.agentCompaction` becomes the message's `meta` (so `{ protected: true }` pins it).
 * One conversion per message object (while its content is unchanged), so the manager's
 * identity cache hits on every later call.
 */
export function langChainToChat(messages: readonly BaseMessage[]): ChatMessage[] {
  return messages.map((message) => {
    const m = message as unknown as LangChainFields;
    const cached = conversions.get(message);
    if (cached && cached.content === m.content && cached.calls === m.tool_calls) return cached.chat;
    const chat = convertMessage(message);
    conversions.set(message, { content: m.content, calls: m.tool_calls, chat });
    return chat;
  });
}

function callArguments(chat: ChatMessage): string[] {
  return ((chat.tool_calls as ChatToolCall[] | undefined) ?? []).map((call) => call.function.arguments);
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { shortened: text };
  }
}

/** The fields every rebuilt message keeps from the original. */
function baseFields(m: LangChainFields, content: unknown): Json {
  const fields: Json = {
    content,
    additional_kwargs: { ...m.additional_kwargs },
    response_metadata: { ...m.response_metadata },
  };
  if (m.id !== undefined) fields.id = m.id;
  if (m.name !== undefined) fields.name = m.name;
  return fields;
}

/** An assistant message with the manager's rewrite: new text, shortened call arguments. */
function rebuildAssistant(m: LangChainFields, content: unknown, args: string[], origin: Origin): Json {
  const fields = baseFields(m, content);
  // The Responses API sends an AI message back as the output items it came with
  // (`response_metadata.output`) when they are there: the rewrite would never reach the wire.
  delete (fields.response_metadata as Json).output;
  const changed = new Map<string, string>();
  fields.tool_calls = (m.tool_calls ?? []).map((call, k) => {
    const value = args[k];
    if (value === undefined || value === origin.args[k]) return call;
    changed.set(String(call.id ?? ''), value);
    return { ...call, args: parseArguments(value) };
  });
  // Raw OpenAI-style calls some providers send from: keep them in step with `tool_calls`.
  const raw = (fields.additional_kwargs as Json).tool_calls;
  if (Array.isArray(raw) && changed.size > 0) {
    (fields.additional_kwargs as Json).tool_calls = raw.map((call: ChatToolCall) =>
      changed.has(call.id)
        ? { ...call, function: { ...call.function, arguments: changed.get(call.id) } }
        : call,
    );
  }
  if (m.invalid_tool_calls !== undefined) fields.invalid_tool_calls = m.invalid_tool_calls;
  if (m.usage_metadata !== undefined) fields.usage_metadata = m.usage_metadata;
  return fields;
}

/** The caller's message with the manager's rewrite applied, as a new message of its class. */
function rebuild(chat: ChatMessage, origin: Origin, classes: LangChainMessageClasses): BaseMessage {
  const m = origin.message as unknown as LangChainFields;
  const contentChanged = chat.content !== origin.content;
  const type = typeOf(m);
  const content = contentChanged
    ? type === 'ai'
      ? reasoningKept(m, chat.content)
      : chat.content
    : m.content;
  if (type === 'ai') {
    return new classes.AIMessage(
      rebuildAssistant(m, content, callArguments(chat), origin) as never,
    ) as unknown as BaseMessage;
  }
  const fields = baseFields(m, content);
  if (type === 'tool') {
    fields.tool_call_id = m.tool_call_id;
    if (m.status !== undefined) fields.status = m.status;
    if (m.metadata !== undefined) fields.metadata = m.metadata;
    // The artifact is the full output the model never sees: dropped with the text it backs.
    if (!contentChanged && m.artifact !== undefined) fields.artifact = m.artifact;
    return new classes.ToolMessage(fields as never) as unknown as BaseMessage;
  }
  if (type === 'system') return new classes.SystemMessage(fields as never) as unknown as BaseMessage;
  if (type === 'human') return new classes.HumanMessage(fields as never) as unknown as BaseMessage;
  // Any other kind (a ChatMessage with a role ...): its own class, with its own fields.
  const Own = (origin.message as unknown as { constructor: new (fields: Json) => BaseMessage }).constructor;
  return new Own({ ...fields, ...(m.role === undefined ? {} : { role: m.role }) });
}

const REASONING_BLOCKS = new Set(['thinking', 'redacted_thinking', 'reasoning']);

/**
 * A cut AI message's content with its leading reasoning blocks as they came (thinking goes
 * whole or not at all: its signature): those blocks, then the cut text after them. The cut
 * text when it opens with none; its own content when the cut reached into them (a turn a
 * little over its count, rather than one the provider refuses).
 */
function reasoningKept(m: LangChainFields, cut: unknown): unknown {
  if (typeof cut !== 'string' || !Array.isArray(m.content)) return cut;
  const lead: Json[] = [];
  for (const block of m.content as unknown[]) {
    if (isObject(block) && CALL_BLOCKS.has(String(block.type))) continue;
    if (!isObject(block) || !REASONING_BLOCKS.has(String(block.type))) break;
    lead.push(block);
  }
  // Each block's text as chatContent reads it.
  const texts = lead.map((block) => {
    if (typeof block.text === 'string') return block.text;
    const reasoning = block.reasoning ?? block.thinking;
    return typeof reasoning === 'string' ? reasoning : `[${String(block.type)}]`;
  });
  if (lead.length === 0) return cut;
  const visible = textAfterReasoning(cut, texts.join('\n'));
  if (visible === undefined) return m.content;
  return [...lead, ...(visible === '' ? [] : [{ type: 'text', text: visible }])];
}

function rewritten(chat: ChatMessage, origin: Origin): boolean {
  if (chat.content !== origin.content) return true;
  const calls = chat.tool_calls as ChatToolCall[] | undefined;
  if (calls === undefined) return origin.args.length > 0;
  for (let k = 0; k < calls.length; k++) if (calls[k]!.function.arguments !== origin.args[k]) return true;
  return false;
}

/** A message the manager wrote itself (the summary; a result added by `policy.repairInput`). */
function created(chat: ChatMessage, classes: LangChainMessageClasses): BaseMessage {
  const content = typeof chat.content === 'string' ? chat.content : JSON.stringify(chat.content ?? '');
  if (chat.role === 'tool')
    return new classes.ToolMessage({ content, tool_call_id: String(chat.tool_call_id) }) as BaseMessage;
  if (chat.role === 'system' || chat.role === 'developer') return new classes.SystemMessage(content);
  const calls = (chat.tool_calls as ChatToolCall[] | undefined) ?? [];
  if (calls.length > 0) {
    return new classes.AIMessage({
      content,
      tool_calls: calls.map((call) => ({
        id: call.id,
        name: call.function.name,
        args: parseArguments(call.function.arguments) as Json,
        type: 'tool_call' as const,
      })),
    }) as BaseMessage;
  }
  // The summary goes as a user turn (as LangChain's own summarization middleware sends it):
  // every provider accepts one anywhere, where an assistant turn may not open a conversation.
  return markSummary(new classes.HumanMessage(content));
}

/**
 * Converts the manager's output back: every kept message is the caller's original object,
 * unless the manager rewrote it (a cleared tool output becomes a new `ToolMessage` with the same
 * `tool_call_id`, shortened arguments a new `AIMessage`); the summary is a `HumanMessage`.
 */
export function chatToLangChain(
  messages: readonly unknown[],
  classes: LangChainMessageClasses,
): BaseMessage[] {
  return messages.map((value) => backToLangChain(value as ChatMessage, classes));
}

function backToLangChain(chat: ChatMessage, classes: LangChainMessageClasses): BaseMessage {
  const origin = chat[ORIGIN] as Origin | undefined;
  if (!origin) return created(chat, classes);
  return rewritten(chat, origin) ? rebuild(chat, origin, classes) : origin.message;
}

/**
 * {@link chatToLangChain} into the same array: for an array the caller owns (a manager's
 * result), so a long history is not copied once more.
 */
export function chatToLangChainInPlace(messages: unknown[], classes: LangChainMessageClasses): BaseMessage[] {
  for (let i = 0; i < messages.length; i++)
    messages[i] = backToLangChain(messages[i] as ChatMessage, classes);
  return messages as BaseMessage[];
}

/** The text of a LangChain message's content (strings and text blocks; other blocks by type). */
export function contentText(content: unknown): string {
  const chat = chatContent(content, false);
  if (typeof chat === 'string') return chat;
  return (chat as Json[])
    .map((part) => (typeof part.text === 'string' ? part.text : `[${String(part.type)}]`))
    .join('\n');
}
