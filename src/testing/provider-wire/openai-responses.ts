/** The OpenAI Responses wire format (`POST /v1/responses`), whole or streamed. */
import {
  argumentsText,
  FIXED_CREATED,
  type RecordedRequest,
  type Resolved,
  resolve,
  type ScriptedReply,
  splitText,
} from './scripted-reply.js';

function responsesOutput(r: Resolved): Record<string, unknown>[] {
  const output: Record<string, unknown>[] = [];
  if (r.text !== '' || r.refusal !== undefined) {
    const content: Record<string, unknown>[] = [];
    if (r.text !== '') content.push({ type: 'output_text', text: r.text, annotations: [], logprobs: [] });
    if (r.refusal !== undefined) content.push({ type: 'refusal', refusal: r.refusal });
    output.push({
      type: 'message',
      id: `msg_test_${r.seq}`,
      status: 'completed',
      role: 'assistant',
      content,
    });
  }
  r.toolCalls.forEach((call, i) => {
    output.push({
      type: 'function_call',
      id: `fc_test_${r.seq}_${i}`,
      call_id: call.id ?? `call_${r.seq}_${i}`,
      name: call.name,
      arguments: argumentsText(call),
      status: 'completed',
    });
  });
  return output;
}

/** A Responses API response object (`object: response`). */
export function responsesBody(reply: ScriptedReply, request: RecordedRequest): Record<string, unknown> {
  const r = resolve(reply, request);
  const body = (request.body ?? {}) as Record<string, unknown>;
  const incomplete =
    r.finish === 'length'
      ? { reason: 'max_output_tokens' }
      : r.finish === 'content_filter'
        ? { reason: 'content_filter' }
        : null;
  return {
    id: `resp_test_${r.seq}`,
    object: 'response',
    created_at: FIXED_CREATED,
    status: incomplete ? 'incomplete' : 'completed',
    background: false,
    error: null,
    incomplete_details: incomplete,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: r.model,
    output: responsesOutput(r),
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: {
      input_tokens: r.inputTokens,
      input_tokens_details: { cached_tokens: r.cacheReadTokens },
      output_tokens: r.outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: r.inputTokens + r.outputTokens,
    },
    metadata: body.metadata ?? {},
  };
}

/** The SSE events (`{event, data}`) of a streamed Responses API response. */
export function responsesEvents(
  reply: ScriptedReply,
  request: RecordedRequest,
): { event: string; data: unknown }[] {
  const final = responsesBody(reply, request);
  const r = resolve(reply, request);
  const events: { event: string; data: Record<string, unknown> }[] = [];
  const push = (type: string, data: Record<string, unknown>) =>
    events.push({ event: type, data: { type, ...data } });
  const inProgress = { ...final, status: 'in_progress', output: [], usage: null, incomplete_details: null };
  push('response.created', { response: inProgress });
  push('response.in_progress', { response: inProgress });
  (final.output as Record<string, unknown>[]).forEach((item, outputIndex) => {
    const itemId = item.id as string;
    if (item.type === 'message') {
      push('response.output_item.added', {
        output_index: outputIndex,
        item: { ...item, status: 'in_progress', content: [] },
      });
      (item.content as Record<string, unknown>[]).forEach((part, contentIndex) => {
        const where = { item_id: itemId, output_index: outputIndex, content_index: contentIndex };
        if (part.type === 'output_text') {
          push('response.content_part.added', {
            ...where,
            part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
          });
          for (const delta of splitText(r.text))
            push('response.output_text.delta', { ...where, delta, logprobs: [] });
          push('response.output_text.done', { ...where, text: r.text, logprobs: [] });
        } else {
          push('response.content_part.added', { ...where, part: { type: 'refusal', refusal: '' } });
          push('response.refusal.delta', { ...where, delta: part.refusal });
          push('response.refusal.done', { ...where, refusal: part.refusal });
        }
        push('response.content_part.done', { ...where, part });
      });
    } else {
      push('response.output_item.added', {
        output_index: outputIndex,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      for (const delta of splitText(item.arguments as string)) {
        push('response.function_call_arguments.delta', { item_id: itemId, output_index: outputIndex, delta });
      }
      push('response.function_call_arguments.done', {
        item_id: itemId,
        output_index: outputIndex,
        name: item.name,
        arguments: item.arguments,
      });
    }
    push('response.output_item.done', { output_index: outputIndex, item });
  });
  push(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final });
  return events.map((event, i) => ({ event: event.event, data: { ...event.data, sequence_number: i } }));
}
