import { CompactError, invalidMessage } from '../../errors.js';
import { flatString } from '../flat-string.js';
import type { CompactMessage, ToolCall, ToolResult } from '../message.js';
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
import { anthropicCompactionBlock, type ProviderCompaction } from './provider-compaction.js';

/**
 * Anthropic block types kept as a `[type]` placeholder in the text (their media are counted
 * apart, see media-parts.ts). Any other type is rejected, as an unknown Chat part is: counting
 * it would be a guess, and the provider would refuse it anyway.
 */
const OTHER_BLOCK_TYPES: ReadonlySet<string> = new Set([
  'image',
  'document',
  'redacted_thinking',
  'search_result',
  'container_upload',
  'thinking',
  'compaction',
]);

function unknownBlock(type: string, index: number, j: number): CompactError {
  const problem = `unknown content block type "${type.slice(0, 64)}" (Anthropic blocks: text, image, document, tool_use, tool_result, thinking, redacted_thinking, search_result, compaction, server and MCP tool blocks)`;
  return new CompactError('invalid_messages', `messages[${index}].content[${j}]: ${problem}`, {
    issues: [{ path: ['messages', index, 'content', j, 'type'], message: problem }],
  });
}

function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return partsText(content);
  return '';
}

/** An image or document block's `source`: an object naming its kind (base64, url, file, text ...). */
function isSource(source: unknown): boolean {
  return (
    source !== null && typeof source === 'object' && typeof (source as { type?: unknown }).type === 'string'
  );
}

/** A server or MCP tool block: a `*_tool_use` call, or a block answering one (`web_search_tool_result`, ...). */
function isServerBlock(block: Record<string, unknown>): boolean {
  return /tool_use$/.test(String(block.type)) || block.tool_use_id !== undefined;
}

/** What a server tool block says, for counting and the summary: its input, or its result's text. */
function serverBlockText(block: Record<string, unknown>): string {
  if (/tool_use$/.test(String(block.type)))
    return `${String(block.name)} ${JSON.stringify(block.input ?? {})}`;
  return blockText(block.content);
}

/**
 * Anthropic Messages: `user`/`assistant` messages whose content is a string or blocks;
 * `tool_use` blocks are calls, `tool_result` blocks their results. Server and MCP tool blocks
 * (`server_tool_use`, `web_search_tool_result`, `mcp_tool_use`, ...) are neither: Anthropic runs
 * them inside the assistant turn, so they are that turn's text (a caller's result never answers
 * them, and read as a call and its result in one message they broke the pairing: review 84d). A `compaction`
 * block (context edit `compact_20260112`) counts as its summary text and pins its message;
 * with a summary it is the boundary before which nothing counts (provider-compaction.ts).
 * The system prompt travels separately (pass it as `system` in the options).
 */
export const anthropicCodec: MessageCodec = {
  format: 'anthropic',

  parse(raw: unknown, index: number): ParsedMessage {
    const m = messageObject(raw, index);
    if (typeof m.role !== 'string') throw invalidMessage(index, 'role', 'is missing');
    if (m.role !== 'user' && m.role !== 'assistant' && m.role !== 'system') {
      throw invalidMessage(index, 'role', `"${m.role}" is not an Anthropic role (user or assistant)`);
    }
    const meta = readMeta(m, index);
    const toolCalls: ToolCall[] = [];
    const toolResults: ToolResult[] = [];
    const texts: string[] = [];
    let compaction: ProviderCompaction | undefined;
    if (typeof m.content === 'string') {
      texts.push(m.content);
    } else if (Array.isArray(m.content)) {
      m.content.forEach((block: unknown, j) => {
        if (block === null || typeof block !== 'object')
          throw invalidMessage(index, `content.${j}`, 'must be a content block object');
        const b = block as Record<string, unknown>;
        if (typeof b.type !== 'string') throw invalidMessage(index, `content.${j}.type`, 'is missing');
        if (b.type !== 'tool_use' && b.type !== 'tool_result' && isServerBlock(b)) {
          // Run by Anthropic inside the assistant turn (web search, code execution, MCP connector):
          // the result is in the same turn (or the next, after `pause_turn`), never the caller's.
          texts.push(`[${b.type}]`, serverBlockText(b));
        } else if (b.type === 'tool_use') {
          if (typeof b.id !== 'string')
            throw invalidMessage(index, `content.${j}.id`, 'must be a string on a tool_use block');
          if (typeof b.name !== 'string')
            throw invalidMessage(index, `content.${j}.name`, 'must be a string on a tool_use block');
          toolCalls.push({ id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) });
        } else if (b.type === 'tool_result') {
          if (typeof b.tool_use_id !== 'string')
            throw invalidMessage(index, `content.${j}.tool_use_id`, 'must be a string');
          const result: ToolResult = { callId: b.tool_use_id, output: blockText(b.content) };
          if (b.is_error === true) result.isError = true;
          toolResults.push(result);
        } else if (b.type === 'text') {
          if (typeof b.text !== 'string')
            throw invalidMessage(index, `content.${j}.text`, 'must be a string');
          texts.push(b.text);
        } else if ((b.type === 'image' || b.type === 'document') && !isSource(b.source)) {
          throw invalidMessage(
            index,
            `content.${j}.source`,
            `must be an object with a type on a "${b.type}" block`,
          );
        } else if (b.type === 'thinking' && typeof b.thinking === 'string') {
          texts.push(b.thinking);
        } else if (b.type === 'compaction' && anthropicCompactionBlock(b)) {
          const read = anthropicCompactionBlock(b)!;
          if (read.text) texts.push(read.text);
          if (compaction !== 'boundary') compaction = read.state;
        } else if (OTHER_BLOCK_TYPES.has(b.type)) {
          texts.push(`[${b.type}]`);
        } else {
          throw unknownBlock(b.type, index, j);
        }
      });
    } else {
      throw invalidMessage(index, 'content', 'must be a string or an array of content blocks');
    }
    const parsed: ParsedMessage = {
      role: m.role,
      kind: 'message',
      text: texts.join('\n'),
      toolCalls: toolCalls.length > 0 ? toolCalls : NO_TOOL_CALLS,
      toolResults: toolResults.length > 0 ? toolResults : NO_TOOL_RESULTS,
      format: 'anthropic',
      raw,
    };
    if (compaction) parsed.providerCompaction = compaction;
    if (toolCalls.length > 0) parsed.explicitId = flatString('use:', toolCalls[0]!.id);
    else if (toolResults.length > 0) parsed.explicitId = flatString('result:', toolResults[0]!.callId);
    return withMeta(parsed, meta);
  },

  toWire(message: CompactMessage): unknown {
    if (message.format === 'anthropic') return stripMeta(message.raw);
    const content: Record<string, unknown>[] = [];
    for (const result of message.toolResults) {
      content.push({
        type: 'tool_result',
        tool_use_id: result.callId,
        content: result.output,
        ...(result.isError ? { is_error: true } : {}),
      });
    }
    if (message.text) content.push({ type: 'text', text: message.text });
    for (const call of message.toolCalls) {
      let input: unknown = {};
      try {
        input = JSON.parse(call.arguments || '{}');
      } catch {
        input = { arguments: call.arguments };
      }
      content.push({ type: 'tool_use', id: call.id, name: call.name, input });
    }
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    return { role, content };
  },

  summaryRole: 'user',

  summaryMessage(text: string): unknown {
    // A user turn: Anthropic conversations must not start with an assistant turn.
    return { role: 'user', content: text };
  },
};
