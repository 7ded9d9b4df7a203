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
 * Per array, the leading items read last time that told nothing (plain messages): how many,
 * and the first and last of them, so that the next call on the same array (a history that
 * grows by appending) reads only what follows. Without it every call read a plain history
 * whole: O(n) per call, about 2 ms at 100k messages (issue 47).
 */
interface UntoldPrefix {
  length: number;
  first: unknown;
  last: unknown;
}

const untold = new WeakMap<readonly unknown[], UntoldPrefix>();

/** Arrays from this length remember their untold prefix (shorter ones are read whole). */
const REMEMBER_FROM = 256;

/** Where to start reading `messages`: after the prefix that told nothing last time, if it still holds. */
function untoldLength(messages: readonly unknown[]): number {
  const seen = untold.get(messages);
  if (seen === undefined || seen.length > messages.length) return 0;
  return messages[0] === seen.first && messages[seen.length - 1] === seen.last ? seen.length : 0;
}

/**
 * Detects the wire format of a message list from the first item that tells. Plain
 * `{role, content: string}` lists are valid in all three formats and come back unchanged,
 * so they are read as `openai-chat`. An array read before is read from where its plain prefix
 * ended (its first and last items still the same objects): messages are not to be replaced
 * once sent, as the index assumes too.
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
  const from = messages.length < REMEMBER_FROM ? 0 : untoldLength(messages);
  let format: MessageFormat | undefined;
  let k = from;
  for (; k < messages.length && format === undefined; k++) format = formatOf(messages[k]);
  // The items before `untoldEnd` told nothing.
  const untoldEnd = format === undefined ? k : k - 1;
  if (untoldEnd >= REMEMBER_FROM && untoldEnd > from)
    untold.set(messages, { length: untoldEnd, first: messages[0], last: messages[untoldEnd - 1] });
  return format ?? 'openai-chat';
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
