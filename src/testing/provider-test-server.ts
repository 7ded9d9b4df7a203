import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Which provider API a request was sent to, by path. */
export type ProviderEndpoint = 'openai-chat' | 'openai-responses' | 'anthropic-messages' | 'other';

/** One request the server received, recorded in arrival order. */
export interface RecordedRequest {
  /** HTTP method. */
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** The API the path belongs to. */
  endpoint: ProviderEndpoint;
  /** Request headers (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  body: unknown;
  /** The body as received. */
  rawBody: string;
  /** True when the body asked for a streamed (SSE) response. */
  stream: boolean;
  /** 1-based position among all requests. */
  seq: number;
}

/** A tool call the scripted model makes. */
export interface ScriptedToolCall {
  /** Call id. @default `call_<n>` (OpenAI) or `toolu_<n>` (Anthropic) */
  id?: string;
  /** Tool name. */
  name: string;
  /** Arguments: an object, or JSON text. */
  arguments: string | Record<string, unknown>;
}

/**
 * A provider-neutral answer; the server writes it in the wire format of the endpoint that was
 * called (Chat Completions, Responses, Messages), streamed as SSE when the request asked for it.
 */
export interface ScriptedReply {
  /** The assistant's text. @default '' */
  text?: string;
  /** Tool calls, after the text. */
  toolCalls?: ScriptedToolCall[];
  /** A refusal message (Chat `message.refusal`, Responses `refusal` part; Messages uses `stop_reason: refusal`). */
  refusal?: string;
  /**
   * Why generation stopped, mapped per API: `length` -> `length` / `incomplete: max_output_tokens` /
   * `max_tokens`; `content_filter` -> `content_filter` / `incomplete: content_filter` / `refusal`.
   * @default 'tool_calls' when there are tool calls, 'refusal' when `refusal` is set, else 'stop'
   */
  finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'refusal';
  /** Model name in the response. @default the request's `model` */
  model?: string;
  /** Token usage. @default about 4 characters per token of the request body and the text */
  usage?: { inputTokens: number; outputTokens: number };
  /** Wait this long before answering, in ms. */
  delayMs?: number;
}

/** A provider-formatted error (`{error:{...}}` for OpenAI, `{type:'error',error:{...}}` for Anthropic). */
export interface ErrorReply {
  error: {
    /** HTTP status, e.g. 429, 500. */
    status: number;
    message: string;
    /** Provider error type. @default by status (`rate_limit_error`, `api_error` ...) */
    type?: string;
    /** `retry-after-ms` header value. @default '1' (so SDK retries do not wait) */
    retryAfterMs?: string;
  };
  delayMs?: number;
}

/** An exact HTTP response, for malformed bodies and anything the other forms cannot say. */
export interface RawReply {
  /** @default 200 */
  status?: number;
  headers?: Record<string, string>;
  /** Serialized as JSON. */
  json?: unknown;
  /** Sent as is (wins over `json`). */
  body?: string;
  delayMs?: number;
}

/** Never answers: the connection stays open until the client aborts or the server closes. */
export interface HangReply {
  hang: true;
}

/** What a handler returns for one request. */
export type ProviderReply = ScriptedReply | ErrorReply | RawReply | HangReply;

/** Decides the reply to each request; `undefined` means the default reply (`{ text: 'ok' }`). */
export type ProviderHandler = (
  request: RecordedRequest,
) => ProviderReply | undefined | Promise<ProviderReply | undefined>;

/** Options of {@link startProviderTestServer}. */
export interface ProviderTestServerOptions {
  /**
   * A function deciding each reply, or a list of replies used in order (then the default).
   * @default every request gets `{ text: 'ok' }`
   */
  handler?: ProviderHandler | ProviderReply[];
}

/** A running test server. */
export interface ProviderTestServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Base URL for the `openai` SDK and `@ai-sdk/openai`: `${url}/v1`. */
  openaiBaseURL: string;
  /** Base URL for `@anthropic-ai/sdk`: `url` (the SDK appends `/v1/messages`). */
  anthropicBaseURL: string;
  /** Every request received so far, in order. */
  requests: RecordedRequest[];
  /** Stops the server, dropping open (hanging) connections. */
  close(): Promise<void>;
}

const FIXED_CREATED = 1_700_000_000;

function endpointOf(path: string): ProviderEndpoint {
  if (path.endsWith('/chat/completions')) return 'openai-chat';
  if (path.endsWith('/responses')) return 'openai-responses';
  if (path.endsWith('/messages')) return 'anthropic-messages';
  return 'other';
}

function estimate(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function argumentsText(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function argumentsObject(call: ScriptedToolCall): unknown {
  if (typeof call.arguments !== 'string') return call.arguments;
  try {
    return JSON.parse(call.arguments);
  } catch {
    return {};
  }
}

interface Resolved {
  model: string;
  text: string;
  toolCalls: ScriptedToolCall[];
  refusal: string | undefined;
  finish: NonNullable<ScriptedReply['finishReason']>;
  inputTokens: number;
  outputTokens: number;
  seq: number;
}

function resolve(reply: ScriptedReply, request: RecordedRequest): Resolved {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const text = reply.text ?? '';
  const toolCalls = reply.toolCalls ?? [];
  const finish =
    reply.finishReason ??
    (toolCalls.length > 0 ? 'tool_calls' : reply.refusal !== undefined ? 'refusal' : 'stop');
  return {
    model: reply.model ?? (typeof body.model === 'string' ? body.model : 'test-model'),
    text,
    toolCalls,
    refusal: reply.refusal,
    finish,
    inputTokens: reply.usage?.inputTokens ?? estimate(request.rawBody),
    outputTokens: reply.usage?.outputTokens ?? estimate(text + toolCalls.map(argumentsText).join('')),
    seq: request.seq,
  };
}

// ---------- OpenAI Chat Completions ----------

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
        },
      }),
    );
  }
  out.push('[DONE]');
  return out;
}

function splitText(text: string): string[] {
  if (text === '') return [];
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += 16) pieces.push(text.slice(i, i + 16));
  return pieces;
}

// ---------- OpenAI Responses ----------

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
      input_tokens_details: { cached_tokens: 0 },
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

// ---------- Anthropic Messages ----------

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
      input_tokens: r.inputTokens,
      output_tokens: r.outputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
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

// ---------- the server ----------

function errorType(status: number, anthropic: boolean): string {
  if (status === 429) return anthropic ? 'rate_limit_error' : 'rate_limit_exceeded';
  if (status === 401) return anthropic ? 'authentication_error' : 'invalid_api_key';
  if (status === 400) return 'invalid_request_error';
  if (status === 529) return 'overloaded_error';
  return anthropic ? 'api_error' : 'server_error';
}

function isHang(reply: ProviderReply): reply is HangReply {
  return 'hang' in reply && reply.hang === true;
}

function isError(reply: ProviderReply): reply is ErrorReply {
  return 'error' in reply && typeof reply.error === 'object' && reply.error !== null;
}

function isRaw(reply: ProviderReply): reply is RawReply {
  return 'status' in reply || 'json' in reply || 'body' in reply || 'headers' in reply;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function writeSse(response: ServerResponse, events: { event?: string; data: unknown }[]): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  for (const event of events) {
    const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
    response.write(event.event ? `event: ${event.event}\ndata: ${data}\n\n` : `data: ${data}\n\n`);
  }
  response.end();
}

/**
 * Starts an HTTP server on 127.0.0.1 (a free port) that speaks the OpenAI Chat Completions
 * (`POST /v1/chat/completions`), OpenAI Responses (`POST /v1/responses`) and Anthropic Messages
 * (`POST /v1/messages`) wire formats, streamed (SSE) or not, records every request, and answers
 * as the handler scripts: text, tool calls, refusals, length stops, provider errors (429, 500),
 * raw or malformed bodies, delays and hangs. Drive it with the official SDK clients.
 *
 * @example
 * ```ts
 * const server = await startProviderTestServer({ handler: [{ error: { status: 429, message: 'slow down' } }, { text: 'summary' }] });
 * const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test', maxRetries: 1 });
 * await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
 * expect(server.requests).toHaveLength(2);
 * await server.close();
 * ```
 */
export async function startProviderTestServer(
  options: ProviderTestServerOptions = {},
): Promise<ProviderTestServer> {
  const requests: RecordedRequest[] = [];
  const queue = Array.isArray(options.handler) ? [...options.handler] : undefined;
  const handler = typeof options.handler === 'function' ? options.handler : undefined;

  const server = createServer(async (incoming, response) => {
    try {
      const rawBody = await readBody(incoming);
      let body: unknown;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        body = undefined;
      }
      const path = (incoming.url ?? '/').split('?')[0] ?? '/';
      const recorded: RecordedRequest = {
        method: incoming.method ?? 'GET',
        path,
        endpoint: endpointOf(path),
        headers: { ...incoming.headers },
        body,
        rawBody,
        stream: (body as { stream?: unknown } | undefined)?.stream === true,
        seq: requests.length + 1,
      };
      requests.push(recorded);
      const reply: ProviderReply = (queue ? queue.shift() : await handler?.(recorded)) ?? { text: 'ok' };
      if (isHang(reply)) return;
      const delay = reply.delayMs ?? 0;
      if (delay > 0) {
        const closed = await new Promise<boolean>((done) => {
          const timer = setTimeout(() => done(false), delay);
          response.once('close', () => {
            clearTimeout(timer);
            done(true);
          });
        });
        if (closed) return;
      }
      const anthropic = recorded.endpoint === 'anthropic-messages';
      if (isError(reply)) {
        const { status, message, type = errorType(status, anthropic), retryAfterMs = '1' } = reply.error;
        const payload = anthropic
          ? { type: 'error', error: { type, message } }
          : { error: { message, type, param: null, code: type } };
        response.writeHead(status, { 'content-type': 'application/json', 'retry-after-ms': retryAfterMs });
        response.end(JSON.stringify(payload));
        return;
      }
      if (isRaw(reply)) {
        response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        response.end(reply.body ?? (reply.json === undefined ? '' : JSON.stringify(reply.json)));
        return;
      }
      switch (recorded.endpoint) {
        case 'openai-chat':
          if (recorded.stream)
            writeSse(
              response,
              chatCompletionChunks(reply, recorded).map((data) => ({ data })),
            );
          else sendJson(response, chatCompletionBody(reply, recorded));
          return;
        case 'openai-responses':
          if (recorded.stream) writeSse(response, responsesEvents(reply, recorded));
          else sendJson(response, responsesBody(reply, recorded));
          return;
        case 'anthropic-messages':
          if (recorded.stream) writeSse(response, anthropicMessageEvents(reply, recorded));
          else sendJson(response, anthropicMessageBody(reply, recorded));
          return;
        default:
          response.writeHead(404, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({
              error: { message: `no route for ${recorded.method} ${path}`, type: 'not_found' },
            }),
          );
      }
    } catch (error) {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: String(error), type: 'test_server_error' } }));
    }
  });

  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    openaiBaseURL: `${url}/v1`,
    anthropicBaseURL: url,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

function sendJson(response: ServerResponse, payload: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(payload));
}
