/**
 * Lossless conversion between the Vercel AI SDK's message formats (the provider-level
 * `LanguageModelV3Prompt` a middleware sees, and the `ModelMessage[]` `prepareStep` sees) and
 * OpenAI Chat messages, the format the manager compacts. Each converted message carries a
 * reference to its origin, so every message the manager keeps comes back as the caller's own
 * object: nothing is re-serialized, provider options and file parts survive untouched.
 */

import { CHAT_TURNS, summaryFirst, type TurnForm } from '../../core/messages/summary-first.js';
import { TimeSlice } from '../../core/time-slice.js';
import { textAfterReasoning } from '../reasoning-head.js';
import { chatText, encryptedReasoning, resultContent, withMedia } from './ai-sdk-media.js';
import { type AiSdkMessage, type AiSdkPart, approvalsOnly, parts, partText } from './ai-sdk-parts.js';

export type { AiSdkMessage, AiSdkPart } from './ai-sdk-parts.js';
export { toolOutputText } from './ai-sdk-parts.js';

/** Which AI SDK format a list is in; decides how a summary message is written. */
export type AiSdkMessageKind = 'prompt' | 'model-messages';

/** The `providerOptions` key under which a message can be marked protected. */
export const AI_SDK_OPTIONS_KEY = 'agentCompaction';

const ORIGIN = Symbol('agent-compaction.ai-sdk-origin');

interface Origin {
  message: AiSdkMessage;
  /** For a tool message split into one Chat message per result: the part index. */
  part?: number;
  /** How many results the original tool message has. */
  parts?: number;
  /** The converted message's content and call arguments, to tell a rewrite by the manager. */
  content?: unknown;
  /** A tool message of approval responses only that goes back just before this one. */
  before?: AiSdkMessage | undefined;
  args?: string[];
}

type ChatMessage = Record<string | symbol, unknown>;

function withOrigin(chat: ChatMessage, origin: Origin): ChatMessage {
  origin.content = chat.content;
  const calls = chat.tool_calls as { function: { arguments: string } }[] | undefined;
  if (calls) origin.args = calls.map((call) => call.function.arguments);
  Object.defineProperty(chat, ORIGIN, { value: origin, enumerable: true });
  return chat;
}

function metaOf(message: AiSdkMessage): Record<string, unknown> | undefined {
  const options = message.providerOptions?.[AI_SDK_OPTIONS_KEY];
  return options && typeof options === 'object' ? { ...options } : undefined;
}

/**
 * Converts AI SDK messages to OpenAI Chat messages for the manager: assistant tool calls become
 * `tool_calls`, each tool result its own `role: "tool"` message. `providerOptions.agentCompaction`
 * becomes the message's `meta` (so `{ protected: true }` pins it). `mediaAsText`: the provider
 * sends a tool result's media as the output's JSON (`*.chat` providers), so it is counted so.
 */
export function aiSdkToChat(messages: readonly AiSdkMessage[], mediaAsText = false): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++)
    convertInto(messages[i]!, out, messages[i - 1], messages[i + 1], mediaAsText);
  return out;
}

/**
 * Work between two reads of the clock in {@link aiSdkToChatInSlices}: a message read from the
 * cache counts 1, one converted {@link CONVERTED_WEIGHT}.
 */
const WORK_PER_CHECK = 256;
const CONVERTED_WEIGHT = 16;

/**
 * {@link aiSdkToChat}, giving the event loop a turn every few milliseconds (a first call of a
 * long history converts every message: 16k messages held the loop 60-90 ms in one block).
 * The same messages as {@link aiSdkToChat}.
 */
export async function aiSdkToChatInSlices(
  messages: readonly AiSdkMessage[],
  mediaAsText = false,
): Promise<ChatMessage[]> {
  const out: ChatMessage[] = [];
  const slice = new TimeSlice();
  let work = 0;
  for (let i = 0; i < messages.length; i++) {
    work += convertInto(messages[i]!, out, messages[i - 1], messages[i + 1], mediaAsText)
      ? CONVERTED_WEIGHT
      : 1;
    if (work < WORK_PER_CHECK) continue;
    work = 0;
    if (slice.due()) await slice.pause();
  }
  return out;
}

/**
 * Appends the Chat messages of `message` to `out`; true when it was converted, not read from
 * the cache. A tool message of approval responses only, between a call and its results, has no
 * Chat message of its own (a user turn there would part the call from its results): it goes
 * back with the tool message after it (`before`).
 */
function convertInto(
  message: AiSdkMessage,
  out: ChatMessage[],
  previous: AiSdkMessage | undefined,
  next: AiSdkMessage | undefined,
  mediaAsText: boolean,
): boolean {
  if (approvalsOnly(message) && next?.role === 'tool' && !approvalsOnly(next)) return false;
  const before = approvalsOnly(previous) && message.role === 'tool' ? previous : undefined;
  // One conversion per message object (and content), so the manager's identity cache hits
  // on every later call instead of hashing fresh copies.
  const conversions = mediaAsText ? textConversions : mediaConversions;
  const cached = conversions.get(message);
  let chats = cached?.chats;
  const converted = !(
    cached &&
    cached.content === message.content &&
    cached.options === message.providerOptions
  );
  if (converted) {
    chats = convertMessage(message, mediaAsText);
    conversions.set(message, { content: message.content, options: message.providerOptions, chats });
  }
  // A loop, not a spread: a warm call of a long history reads every message from here.
  for (const chat of chats!) {
    const origin = chat[ORIGIN] as Origin;
    if (origin.before !== before) origin.before = before;
    out.push(chat);
  }
  return converted;
}

type Conversions = WeakMap<AiSdkMessage, { content: unknown; options: unknown; chats: ChatMessage[] }>;
/** Per message, its conversion for a provider that sends tool result media as media, or as text. */
const mediaConversions: Conversions = new WeakMap();
const textConversions: Conversions = new WeakMap();

function convertMessage(message: AiSdkMessage, mediaAsText: boolean): ChatMessage[] {
  const out: ChatMessage[] = [];
  const meta = metaOf(message);
  const base = meta ? { meta } : {};
  if (message.role === 'tool') {
    const results = parts(message).filter((part) => part.type === 'tool-result');
    results.forEach((part, index) => {
      out.push(
        withOrigin(
          {
            role: 'tool',
            tool_call_id: String(part.toolCallId),
            content: resultContent(part, partText(part), mediaAsText),
            ...base,
          },
          { message, part: index, parts: results.length },
        ),
      );
    });
    if (results.length === 0) {
      // Only approval responses: keep them with the conversation as a user-visible note.
      out.push(
        withOrigin({ role: 'user', content: parts(message).map(partText).join('\n'), ...base }, { message }),
      );
    }
    return out;
  }
  if (message.role === 'system') {
    out.push(
      withOrigin({ role: 'system', content: parts(message).map(partText).join('\n'), ...base }, { message }),
    );
    return out;
  }
  const all = parts(message);
  const calls = all.filter((part) => part.type === 'tool-call' && part.providerExecuted !== true);
  const text = all
    .filter((part) => !(part.type === 'tool-call' && part.providerExecuted !== true))
    .map(partText)
    .filter((value) => value !== '')
    .join('\n');
  // A summary handed back opening a conversation is a user turn (see TurnBack): read as the
  // assistant turn the manager wrote, so a persisted view resumes it (when its mark verifies).
  const summaryTurn = message.role === 'user' && text.startsWith('<COMPACT-SUMMARY v');
  const chat: ChatMessage = {
    role: summaryTurn ? 'assistant' : message.role,
    content: withMedia(text, all),
    ...base,
  };
  const encrypted = encryptedReasoning(all);
  // Never sent (the caller's message is): read by the counter as encrypted reasoning.
  if (encrypted.length > 0) chat.reasoning = encrypted;
  if (calls.length > 0) {
    chat.tool_calls = calls.map((call) => ({
      id: String(call.toolCallId),
      type: 'function',
      function: { name: String(call.toolName), arguments: JSON.stringify(call.input ?? {}) },
    }));
  }
  out.push(withOrigin(chat, { message }));
  return out;
}

function callArguments(chat: ChatMessage): string[] | undefined {
  return (chat.tool_calls as { function: { arguments: string } }[] | undefined)?.map(
    (call) => call.function.arguments,
  );
}

function rewritten(chat: ChatMessage, origin: Origin): boolean {
  if (chat.content !== origin.content) return true;
  const args = callArguments(chat);
  return args?.some((value, k) => value !== origin.args?.[k]) === true;
}

function parseInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { shortened: text };
  }
}

/**
 * The caller's message with the manager's rewrite applied (a cleared or cut text, shortened
 * call arguments): text and reasoning parts become one text part, calls keep their ids.
 */
function applyRewrite(message: AiSdkMessage, chat: ChatMessage, origin: Origin): AiSdkMessage {
  const text = chatText(chat.content);
  if (typeof message.content === 'string') return { ...message, content: text };
  const args = callArguments(chat) ?? [];
  // Reasoning goes whole or not at all (signatures, item ids): a cut that left the turn's
  // leading reasoning whole changes only the text after it; one that reached into it is not
  // made (a turn a little over its count, rather than one the provider refuses).
  const lead = chat.content !== origin.content ? leadingReasoning(message.content) : [];
  const visible = textAfterReasoning(text, lead.map(partText).filter(Boolean).join('\n'));
  const textChanged = chat.content !== origin.content && (lead.length === 0 || visible !== undefined);
  const kept = visible === undefined ? [] : lead;
  let call = -1;
  const rest = message.content.flatMap((part): AiSdkPart[] => {
    if (part.type === 'text' || part.type === 'reasoning' || kept.includes(part)) return [];
    if (part.type !== 'tool-call' || part.providerExecuted === true) return [part];
    call++;
    const value = args[call];
    return [
      value === undefined || value === origin.args?.[call] ? part : { ...part, input: parseInput(value) },
    ];
  });
  const shown = visible ?? text;
  const head = textChanged
    ? [...kept, ...(shown === '' ? [] : [{ type: 'text', text: shown }])]
    : message.content.filter((part) => part.type === 'text' || part.type === 'reasoning');
  return { ...message, content: [...head, ...rest] };
}

/** The reasoning parts a turn's text opens with (calls, which carry no text, skipped). */
function leadingReasoning(content: readonly AiSdkPart[]): AiSdkPart[] {
  const lead: AiSdkPart[] = [];
  for (const part of content) {
    if (part.type === 'tool-call' && part.providerExecuted !== true) continue;
    if (part.type !== 'reasoning' && part.type !== 'redacted-reasoning') break;
    lead.push(part);
  }
  return lead;
}

/** A tool message keeping only the `kept` results, with rewritten outputs as text. */
function rebuildToolMessage(message: AiSdkMessage, kept: Map<number, string | undefined>): AiSdkMessage {
  let index = -1;
  const content = parts(message).flatMap((part): AiSdkPart[] => {
    if (part.type !== 'tool-result') return [part];
    index++;
    if (!kept.has(index)) return [];
    const text = kept.get(index);
    return [text === undefined ? part : { ...part, output: { type: 'text', value: text } }];
  });
  return { ...message, content };
}

/** A tool message answering `callId` (its tool named from the call earlier in `out`). */
function createdToolResult(out: readonly AiSdkMessage[], callId: string, text: string): AiSdkMessage {
  let toolName = 'unknown';
  for (let k = out.length - 1; k >= 0 && toolName === 'unknown'; k--) {
    const content = out[k]!.content;
    if (out[k]!.role !== 'assistant' || typeof content === 'string') continue;
    const call = content.find((part) => part.type === 'tool-call' && part.toolCallId === callId);
    if (call) toolName = String(call.toolName);
  }
  return {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: callId, toolName, output: { type: 'text', value: text } }],
  };
}

/**
 * Converts the manager's output back: every kept message is the caller's original object,
 * unless the manager rewrote it (a cleared tool output, shortened arguments, a cut text) or
 * dropped some of a tool message's results; the summary message is written as a text message
 * of the right format: a user turn when it opens the conversation (after system messages only,
 * or ahead of pinned messages that would open it with an assistant turn), else an assistant turn.
 */
export function chatToAiSdk(messages: readonly unknown[], kind: AiSdkMessageKind): AiSdkMessage[] {
  const back = new TurnBack(kind);
  for (const value of messages) back.add(value as ChatMessage);
  return back.finish();
}

/** Messages turned back between two reads of the clock in {@link chatToAiSdkInSlices}. */
const MESSAGES_PER_CHECK = 256;

/**
 * {@link chatToAiSdk}, giving the event loop a turn every few milliseconds (a first call of a
 * long history turns back every message it keeps). The same messages.
 */
export async function chatToAiSdkInSlices(
  messages: readonly unknown[],
  kind: AiSdkMessageKind,
): Promise<AiSdkMessage[]> {
  const back = new TurnBack(kind);
  const slice = new TimeSlice();
  for (let i = 0; i < messages.length; i++) {
    back.add(messages[i] as ChatMessage);
    if (i % MESSAGES_PER_CHECK === MESSAGES_PER_CHECK - 1 && slice.due()) await slice.pause();
  }
  return back.finish();
}

/** The AI SDK messages of Chat messages, added one by one (see {@link chatToAiSdk}). */
class TurnBack {
  readonly #kind: AiSdkMessageKind;
  readonly #out: AiSdkMessage[] = [];
  readonly #toolParts = new Map<AiSdkMessage, Map<number, string | undefined>>();
  readonly #toolSlots = new Map<AiSdkMessage, number>();
  #summary: AiSdkMessage | undefined;

  constructor(kind: AiSdkMessageKind) {
    this.#kind = kind;
  }

  add(chat: ChatMessage): void {
    const out = this.#out;
    const origin = chat[ORIGIN] as Origin | undefined;
    if (!origin) {
      const text = typeof chat.content === 'string' ? chat.content : JSON.stringify(chat.content);
      if (chat.role === 'tool') {
        // A result the manager wrote or rebuilt without its origin stays a result of its call.
        out.push(createdToolResult(out, String(chat.tool_call_id ?? ''), text));
        return;
      }
      // An assistant turn; a user turn when it opens the conversation (see finish).
      const role = 'assistant';
      this.#summary =
        this.#kind === 'prompt' ? { role, content: [{ type: 'text', text }] } : { role, content: text };
      out.push(this.#summary);
      return;
    }
    if (origin.part === undefined) {
      const message = rewritten(chat, origin) ? applyRewrite(origin.message, chat, origin) : origin.message;
      if (out.at(-1) !== origin.message) out.push(message);
      return;
    }
    let kept = this.#toolParts.get(origin.message);
    if (!kept) {
      kept = new Map();
      this.#toolParts.set(origin.message, kept);
      if (origin.before && out.at(-1) !== origin.before) out.push(origin.before);
      this.#toolSlots.set(origin.message, out.length);
      out.push(origin.message);
    }
    kept.set(origin.part, chat.content !== origin.content ? chatText(chat.content) : undefined);
  }

  finish(): AiSdkMessage[] {
    const out = this.#out;
    for (const [message, kept] of this.#toolParts) {
      const results = parts(message).filter((part) => part.type === 'tool-result');
      const unchanged = [...kept.values()].every((text) => text === undefined);
      if (kept.size === results.length && unchanged) continue;
      out[this.#toolSlots.get(message)!] = rebuildToolMessage(message, kept);
    }
    // Anthropic and Gemini refuse a conversation that opens with an assistant turn (whatever
    // provider the model is): the summary opening it, or a protected tool round kept ahead of it.
    const summary = this.#summary;
    if (summary === undefined) return out;
    return summaryFirst(
      out,
      (message) => message === summary,
      CHAT_TURNS as TurnForm<AiSdkMessage>,
    ) as AiSdkMessage[];
  }
}
