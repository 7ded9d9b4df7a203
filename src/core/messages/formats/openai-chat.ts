import { CompactError, invalidMessage } from '../../errors.js';
import { flatString } from '../flat-string.js';
import type { CompactMessage, MessageRole, ToolCall } from '../message.js';
import {
  type MessageCodec,
  messageObject,
  NO_TOOL_CALLS,
  NO_TOOL_RESULTS,
  type ParsedMessage,
  partsText,
  readMeta,
  stripMeta,
  withMeta,
} from './message-codec.js';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/**
 * Content part types a Chat message may carry: Chat's own, plus the Responses input types SDKs
 * sometimes put in Chat messages. An unknown type is rejected: counting it would be a guess,
 * and the provider would refuse it anyway.
 */
const CHAT_PART_TYPES: ReadonlySet<string> = new Set([
  'text',
  'image_url',
  'input_audio',
  'file',
  'refusal',
  'input_text',
  'input_image',
  'input_file',
  'output_text',
]);

/** Text parts, whose `text` is required. */
const TEXT_PART_TYPES: ReadonlySet<string> = new Set(['text', 'input_text', 'output_text']);

/** The field a known part lacks (`text` of a text part, `image_url.url`), as a path after the part. */
function missingField(part: Record<string, unknown>, type: string): string | undefined {
  if (TEXT_PART_TYPES.has(type)) return typeof part.text === 'string' ? undefined : 'text';
  if (type === 'image_url') {
    const image = part.image_url as { url?: unknown } | string | null | undefined;
    return typeof image === 'string' || typeof image?.url === 'string' ? undefined : 'image_url.url';
  }
  return undefined;
}

function checkPartTypes(parts: readonly unknown[], index: number): void {
  parts.forEach((part, k) => {
    const type = (part as { type?: unknown } | null)?.type;
    if (typeof type !== 'string') return;
    if (CHAT_PART_TYPES.has(type)) {
      const field = missingField(part as Record<string, unknown>, type);
      if (field) throw invalidMessage(index, `content.${k}.${field}`, `must be a string on a "${type}" part`);
      return;
    }
    const problem = `unknown content part type "${type.slice(0, 64)}" (Chat Completions parts: text, image_url, input_audio, file, refusal)`;
    throw new CompactError('invalid_messages', `messages[${index}].content[${k}]: ${problem}`, {
      issues: [{ path: ['messages', index, 'content', k, 'type'], message: problem }],
    });
  });
}

function contentText(content: unknown, index: number, role: string): string {
  if (content === null || content === undefined) {
    if (role === 'assistant') return '';
    throw invalidMessage(index, 'content', `is required for role "${role}"`);
  }
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    checkPartTypes(content, index);
    return partsText(content);
  }
  throw invalidMessage(
    index,
    'content',
    `must be a string or an array of content parts (got ${typeof content})`,
  );
}

/** OpenAI Chat Completions messages: assistant `tool_calls`, `role: "tool"` results. */
export const openaiChatCodec: MessageCodec = {
  format: 'openai-chat',

  parse(raw: unknown, index: number): ParsedMessage {
    const m = messageObject(raw, index);
    if (typeof m.role !== 'string') throw invalidMessage(index, 'role', 'is missing');
    if (!ROLES.has(m.role)) throw invalidMessage(index, 'role', `"${m.role}" is not a Chat Completions role`);
    const role = (m.role === 'function' ? 'tool' : m.role) as MessageRole;
    const meta = readMeta(m, index);
    const text = contentText(m.content, index, m.role);
    let toolCalls = NO_TOOL_CALLS;
    if (m.tool_calls !== undefined && m.tool_calls !== null) {
      if (!Array.isArray(m.tool_calls)) throw invalidMessage(index, 'tool_calls', 'must be an array');
      // `map`, not `push` onto `[]`: an array sized to its calls (a first push reserves 17 slots,
      // kept alive with the parse of every message of a history: issue 47, scavenges).
      toolCalls = m.tool_calls.map((call: unknown, j): ToolCall => {
        const c = call as Record<string, unknown> | null;
        if (!c || typeof c.id !== 'string')
          throw invalidMessage(index, `tool_calls.${j}.id`, 'must be a string');
        const fn = (c.function ?? c.custom) as Record<string, unknown> | undefined;
        if (!fn || typeof fn.name !== 'string')
          throw invalidMessage(index, `tool_calls.${j}.function.name`, 'must be a string');
        const args = fn.arguments ?? fn.input ?? '';
        return {
          id: c.id,
          name: fn.name,
          arguments: typeof args === 'string' ? args : JSON.stringify(args),
        };
      });
      // A sparse array's holes were skipped (as `forEach` does); `map` keeps them.
      if (toolCalls.includes(undefined as never)) toolCalls = toolCalls.filter(Boolean);
    }
    let toolResults = NO_TOOL_RESULTS;
    let explicitId: string | undefined;
    if (role === 'tool') {
      const callId = m.tool_call_id ?? (m.role === 'function' ? m.name : undefined);
      if (typeof callId !== 'string')
        throw invalidMessage(index, 'tool_call_id', 'must be a string on a tool message');
      toolResults = [{ callId, output: text }];
      explicitId = flatString('result:', callId);
    } else if (toolCalls.length > 0) {
      explicitId = flatString('call:', toolCalls[0]!.id);
    }
    const shown = role === 'tool' ? '' : text;
    // Every field in the literal (one literal per shape): a field added after it went to a
    // properties array of its own, one more object per message for the scavenges (issue 47).
    const parsed: ParsedMessage =
      explicitId === undefined
        ? { role, kind: 'message', text: shown, toolCalls, toolResults, format: 'openai-chat', raw }
        : {
            role,
            kind: 'message',
            text: shown,
            toolCalls,
            toolResults,
            format: 'openai-chat',
            raw,
            explicitId,
          };
    return withMeta(parsed, meta);
  },

  toWire(message: CompactMessage): unknown {
    if (message.format === 'openai-chat') return stripMeta(message.raw);
    if (message.toolResults.length > 0) {
      const result = message.toolResults[0]!;
      return { role: 'tool', tool_call_id: result.callId, content: result.output };
    }
    const role = message.role === 'tool' ? 'user' : message.role;
    const out: Record<string, unknown> = { role, content: message.text };
    if (message.toolCalls.length > 0) {
      out.tool_calls = message.toolCalls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      }));
    }
    return out;
  },

  summaryRole: 'assistant',

  summaryMessage(text: string): unknown {
    return { role: 'assistant', content: text };
  },
};
