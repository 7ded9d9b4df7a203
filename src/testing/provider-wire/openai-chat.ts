/** The OpenAI Chat Completions wire format (`POST /v1/chat/completions`), whole or streamed. */
import {
  argumentsText,
  FIXED_CREATED,
  type RecordedRequest,
  type Resolved,
  resolve,
  type ScriptedReply,
  splitText,
} from './scripted-reply.js';

function chatFinish(finish: Resolved['finish']): string {
  if (finish === 'refusal') return 'stop';
  return finish;
}

/** A Chat Completions response object (`object: chat.completion`). */
export function chatCompletionBody(reply: ScriptedReply, request: RecordedRequest): Record<string, unknown> {
  const r = resolve(reply, request);
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: r.refusal !== undefined && r.text === '' ? null : r.text,
    refusal: r.refusal ?? null,
    annotations: [],
  };
  if (r.toolCalls.length > 0) {
    message.tool_calls = r.toolCalls.map((call, i) => ({
      id: call.id ?? `call_${r.seq}_${i}`,
      type: 'function',
      function: { name: call.name, arguments: argumentsText(call) },
    }));
  }
  return {
    id: `chatcmpl-test-${r.seq}`,
    object: 'chat.completion',
    created: FIXED_CREATED,
    model: r.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: chatFinish(r.finish) }],
    usage: {
      prompt_tokens: r.inputTokens,
      completion_tokens: r.outputTokens,
      total_tokens: r.inputTokens + r.outputTokens,
      prompt_tokens_details: { cached_tokens: r.cacheReadTokens },
    },
    system_fingerprint: 'fp_test',
  };
}

/** The SSE `data:` payloads of a streamed Chat Completions response, ending with `[DONE]`. */
export function chatCompletionChunks(reply: ScriptedReply, request: RecordedRequest): string[] {
  const r = resolve(reply, request);
  const base = {
    id: `chatcmpl-test-${r.seq}`,
    object: 'chat.completion.chunk',
    created: FIXED_CREATED,
    model: r.model,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const out = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const piece of splitText(r.text)) out.push(chunk({ content: piece }));
  if (r.refusal !== undefined) out.push(chunk({ refusal: r.refusal }));
  r.toolCalls.forEach((call, index) => {
    out.push(
      chunk({
        tool_calls: [
          {
            index,
            id: call.id ?? `call_${r.seq}_${index}`,
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    );
    for (const piece of splitText(argumentsText(call))) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  out.push(chunk({}, chatFinish(r.finish)));
  const options = (request.body as { stream_options?: { include_usage?: boolean } } | undefined)
    ?.stream_options;
  if (options?.include_usage) {
    out.push(
      JSON.stringify({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: r.inputTokens,
          completion_tokens: r.outputTokens,
          total_tokens: r.inputTokens + r.outputTokens,
          prompt_tokens_details: { cached_tokens: r.cacheReadTokens },
        },
      }),
    );
  }
  out.push('[DONE]');
  return out;
}
