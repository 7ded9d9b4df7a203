import { invalidMessage } from '../../errors.js';
import { flatString } from '../flat-string.js';
import type { CompactMessage, MessageRole } from '../message.js';
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
import { responsesCompaction } from './provider-compaction.js';

const MESSAGE_ROLES = new Set(['system', 'developer', 'user', 'assistant']);

/**
 * The content parts of a message item, each with the fields one of them must carry (Responses
 * names and the Agents SDK's): a part without them is refused by the provider. An unknown type
 * is rejected too, as a Chat part's is: counting it would be a guess.
 */
const PART_FIELDS: Readonly<Record<string, readonly string[]>> = {
  input_text: ['text'],
  output_text: ['text'],
  reasoning_text: ['text'],
  summary_text: ['text'],
  refusal: ['refusal'],
  input_image: ['image_url', 'file_id', 'image', 'imageUrl', 'fileId'],
  computer_screenshot: ['image_url', 'file_id'],
  input_file: ['file_id', 'file_data', 'file_url', 'file', 'fileId'],
  input_audio: ['input_audio'],
  audio: ['audio'],
  image: ['image'],
};

/** Throws `invalid_messages` naming the first part of `parts` that lacks its type or its field. */
function checkParts(parts: readonly unknown[], index: number): void {
  parts.forEach((part, k) => {
    if (part === null || typeof part !== 'object' || Array.isArray(part))
      throw invalidMessage(index, `content.${k}`, 'must be a content part object');
    const p = part as Record<string, unknown>;
    if (typeof p.type !== 'string') throw invalidMessage(index, `content.${k}.type`, 'is missing');
    const fields = PART_FIELDS[p.type];
    if (fields === undefined) {
      const known = Object.keys(PART_FIELDS).join(', ');
      throw invalidMessage(
        index,
        `content.${k}.type`,
        `unknown content part type "${p.type.slice(0, 64)}" (${known})`,
      );
    }
    if (fields.some((field) => p[field] !== undefined && p[field] !== null)) {
      if (fields[0] === 'text' || fields[0] === 'refusal') {
        if (typeof p[fields[0]] !== 'string')
          throw invalidMessage(index, `content.${k}.${fields[0]}`, `must be a string on a "${p.type}" part`);
      }
      return;
    }
    const which = fields.length === 1 ? fields[0] : `one of ${fields.join(', ')}`;
    throw invalidMessage(index, `content.${k}.${fields[0]}`, `is required on a "${p.type}" part (${which})`);
  });
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return partsText(value);
  if (value !== null && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.text === 'string') return v.text;
  }
  return value === undefined ? '' : JSON.stringify(value);
}

/**
 * OpenAI Responses API input items and the OpenAI Agents SDK's items: `message`,
 * `function_call` / `function_call_output` (`call_id`) or `function_call_result` (`callId`),
 * `reasoning`, and every other type kept intact. Any `*_call` item with a call id is a tool
 * call and any `*_output` / `*_result` item with one is its result, so hosted tools
 * (computer, shell, apply_patch, custom tools) stay atomic too. A `compaction` item (from
 * `context_management` or `/responses/compact`) is kept byte for byte, pinned, and is the
 * boundary before which nothing counts (provider-compaction.ts).
 */
export const openaiResponsesCodec: MessageCodec = {
  format: 'openai-responses',

  parse(raw: unknown, index: number): ParsedMessage {
    const item = messageObject(raw, index);
    const meta = readMeta(item, index);
    const type = item.type === undefined ? 'message' : item.type;
    if (typeof type !== 'string') throw invalidMessage(index, 'type', 'must be a string');
    const parsed: ParsedMessage = {
      role: 'assistant',
      kind: 'other',
      text: '',
      toolCalls: NO_TOOL_CALLS,
      toolResults: NO_TOOL_RESULTS,
      format: 'openai-responses',
      raw,
      itemType: type,
    };
    const itemId = typeof item.id === 'string' ? item.id : undefined;
    const callId =
      typeof item.call_id === 'string'
        ? item.call_id
        : typeof item.callId === 'string'
          ? item.callId
          : undefined;

    if (type === 'message') {
      if (typeof item.role !== 'string') throw invalidMessage(index, 'role', 'is missing');
      if (!MESSAGE_ROLES.has(item.role))
        throw invalidMessage(index, 'role', `"${item.role}" is not a message role`);
      if (typeof item.content !== 'string' && !Array.isArray(item.content)) {
        throw invalidMessage(index, 'content', 'must be a string or an array of content parts');
      }
      if (Array.isArray(item.content)) checkParts(item.content, index);
      parsed.role = item.role as MessageRole;
      parsed.kind = 'message';
      parsed.text = stringify(item.content);
    } else if (type === 'reasoning') {
      parsed.kind = 'reasoning';
      parsed.text = Array.isArray(item.summary)
        ? partsText(item.summary)
        : Array.isArray(item.content)
          ? partsText(item.content)
          : '';
    } else if (callId !== undefined && /_call$/.test(type)) {
      const name = typeof item.name === 'string' ? item.name : type.replace(/_call$/, '');
      if (type === 'function_call' && typeof item.name !== 'string')
        throw invalidMessage(index, 'name', 'must be a string');
      const args = item.arguments ?? item.input ?? item.action ?? item.arguments_json ?? '';
      parsed.kind = 'message';
      parsed.toolCalls = [{ id: callId, name, arguments: stringify(args) }];
    } else if (callId !== undefined && /_(output|result)$/.test(type)) {
      parsed.role = 'tool';
      parsed.kind = 'message';
      parsed.toolResults = [{ callId, output: stringify(item.output) }];
    } else if (type === 'compaction') {
      // Opaque: counted as the item's JSON with the payload counted by length (media-parts.ts).
      const state = responsesCompaction(item);
      if (state) parsed.providerCompaction = state;
    } else if (
      type === 'function_call' ||
      type === 'function_call_output' ||
      type === 'function_call_result'
    ) {
      throw invalidMessage(index, 'call_id', `is required on a ${type} item`);
    }

    if (parsed.toolCalls.length > 0) parsed.explicitId = flatString('call:', String(callId));
    else if (parsed.toolResults.length > 0) parsed.explicitId = flatString('result:', String(callId));
    else if (itemId !== undefined) parsed.explicitId = flatString('item:', itemId);
    return withMeta(parsed, meta);
  },

  toWire(message: CompactMessage): unknown {
    if (message.format === 'openai-responses') return stripMeta(message.raw);
    if (message.toolResults.length > 0) {
      const result = message.toolResults[0]!;
      return { type: 'function_call_output', call_id: result.callId, output: result.output };
    }
    if (message.toolCalls.length > 0) {
      const call = message.toolCalls[0]!;
      return { type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments };
    }
    const role = message.role === 'tool' ? 'user' : message.role;
    return { type: 'message', role, content: message.text };
  },

  summaryRole: 'assistant',

  summaryMessage(text: string): unknown {
    return {
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text }],
    };
  },
};
