/** The Anthropic Messages wire format (`POST /v1/messages`), whole or streamed. */
import {
  argumentsObject,
  type RecordedRequest,
  type Resolved,
  resolve,
  type ScriptedReply,
  splitText,
} from './scripted-reply.js';

function anthropicStop(r: Resolved): string {
  switch (r.finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
    case 'refusal':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

function anthropicContent(r: Resolved): Record<string, unknown>[] {
  const content: Record<string, unknown>[] = [];
  if (r.text !== '') content.push({ type: 'text', text: r.text });
  r.toolCalls.forEach((call, i) => {
    content.push({
      type: 'tool_use',
      id: call.id ?? `toolu_test_${r.seq}_${i}`,
      name: call.name,
      input: argumentsObject(call),
    });
  });
  return content;
}

/** An Anthropic Messages response object (`type: message`). */
export function anthropicMessageBody(
  reply: ScriptedReply,
  request: RecordedRequest,
): Record<string, unknown> {
  const r = resolve(reply, request);
  return {
    id: `msg_test_${r.seq}`,
    type: 'message',
    role: 'assistant',
    model: r.model,
    content: anthropicContent(r),
    stop_reason: anthropicStop(r),
    stop_sequence: null,
    usage: {
      input_tokens: Math.max(0, r.inputTokens - r.cacheReadTokens - r.cacheWriteTokens),
      output_tokens: r.outputTokens,
      cache_creation_input_tokens: r.cacheWriteTokens,
      cache_read_input_tokens: r.cacheReadTokens,
    },
  };
}

/** The SSE events (`{event, data}`) of a streamed Anthropic Messages response. */
export function anthropicMessageEvents(
  reply: ScriptedReply,
  request: RecordedRequest,
): { event: string; data: unknown }[] {
  const final = anthropicMessageBody(reply, request);
  const r = resolve(reply, request);
  const events: { event: string; data: unknown }[] = [];
  const push = (type: string, data: Record<string, unknown>) =>
    events.push({ event: type, data: { type, ...data } });
  push('message_start', {
    message: {
      ...final,
      content: [],
      stop_reason: null,
      usage: { ...(final.usage as Record<string, unknown>), output_tokens: 1 },
    },
  });
  (final.content as Record<string, unknown>[]).forEach((block, index) => {
    if (block.type === 'text') {
      push('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const text of splitText(block.text as string)) {
        push('content_block_delta', { index, delta: { type: 'text_delta', text } });
      }
    } else {
      push('content_block_start', { index, content_block: { ...block, input: {} } });
      for (const partial of splitText(JSON.stringify(block.input))) {
        push('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: partial } });
      }
    }
    push('content_block_stop', { index });
  });
  push('message_delta', {
    delta: { stop_reason: final.stop_reason, stop_sequence: null },
    usage: { output_tokens: r.outputTokens },
  });
  push('message_stop', {});
  return events;
}
