import { CompactError, invalidConfig } from '../../errors.js';
import type { MessageFormat } from '../message.js';
import { anthropicCodec } from './anthropic.js';
import type { MessageCodec } from './message-codec.js';
import { openaiChatCodec } from './openai-chat.js';
import { openaiResponsesCodec } from './openai-responses.js';

/** The codec of each format. */
export const MESSAGE_CODECS: Readonly<Record<MessageFormat, MessageCodec>> = Object.freeze({
  'openai-chat': openaiChatCodec,
  'openai-responses': openaiResponsesCodec,
  anthropic: anthropicCodec,
});

const RESPONSES_PART_TYPES = new Set(['input_text', 'output_text', 'input_image', 'input_file', 'refusal']);
const ANTHROPIC_BLOCK_TYPES = new Set([
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'image',
  'document',
  // A Responses compaction is a top-level item (it has its own `type`), never a content part.
  'compaction',
]);

function formatOf(item: unknown): MessageFormat | undefined {
  if (item === null || typeof item !== 'object') return undefined;
  const m = item as Record<string, unknown>;
  if (typeof m.type === 'string') return 'openai-responses';
  if (
    m.role === 'tool' ||
    m.role === 'function' ||
    Array.isArray(m.tool_calls) ||
    typeof m.tool_call_id === 'string'
  ) {
    return 'openai-chat';
  }
  if (Array.isArray(m.content)) {
    for (const part of m.content) {
      const type = (part as Record<string, unknown> | null)?.type;
      if (typeof type !== 'string') continue;
      if (RESPONSES_PART_TYPES.has(type)) return 'openai-responses';
      if (ANTHROPIC_BLOCK_TYPES.has(type) || /tool_use$/.test(type) || 'tool_use_id' in (part as object))
        return 'anthropic';
      if (type === 'image_url' || type === 'input_audio') return 'openai-chat';
    }
  }
  return undefined;
}

/**
 * Detects the wire format of a message list from the first item that tells. Plain
 * `{role, content: string}` lists are valid in all three formats and come back unchanged,
 * so they are read as `openai-chat`.
 */
export function detectFormat(messages: readonly unknown[]): MessageFormat {
  if (!Array.isArray(messages)) {
    throw new CompactError(
      'invalid_messages',
      `messages must be an array (got ${messages === null ? 'null' : typeof messages})`,
      {
        issues: [{ path: ['messages'], message: 'must be an array' }],
      },
    );
  }
  for (const item of messages) {
    const format = formatOf(item);
    if (format) return format;
  }
  return 'openai-chat';
}

/** The codec of a call: the `format` option when given (checked), else detected from the messages. */
export function codecFor(messages: readonly unknown[], format: MessageFormat | undefined): MessageCodec {
  if (format !== undefined && !(format in MESSAGE_CODECS)) {
    throw invalidConfig(
      'format',
      `must be one of ${Object.keys(MESSAGE_CODECS).join(', ')} (got ${String(format)})`,
    );
  }
  return MESSAGE_CODECS[format ?? detectFormat(messages)];
}
