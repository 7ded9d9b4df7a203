import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicMessageBody, anthropicMessageEvents } from './provider-wire/anthropic-messages.js';
import { chatCompletionBody, chatCompletionChunks } from './provider-wire/openai-chat.js';
import { responsesBody, responsesEvents } from './provider-wire/openai-responses.js';
import type {
  ErrorReply,
  HangReply,
  ProviderEndpoint,
  ProviderHandler,
  ProviderReply,
  RawReply,
  RecordedRequest,
} from './provider-wire/scripted-reply.js';

export { anthropicMessageBody, anthropicMessageEvents } from './provider-wire/anthropic-messages.js';
export { chatCompletionBody, chatCompletionChunks } from './provider-wire/openai-chat.js';
export { responsesBody, responsesEvents } from './provider-wire/openai-responses.js';
export type {
  ErrorReply,
  HangReply,
  ProviderEndpoint,
  ProviderHandler,
  ProviderReply,
  RawReply,
  RecordedRequest,
  ScriptedReply,
  ScriptedToolCall,
} from './provider-wire/scripted-reply.js';

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

function endpointOf(path: string): ProviderEndpoint {
  if (path.endsWith('/chat/completions')) return 'openai-chat';
  if (path.endsWith('/responses')) return 'openai-responses';
  if (path.endsWith('/messages')) return 'anthropic-messages';
  return 'other';
}

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
      const recorded = await recordRequest(incoming, requests.length + 1);
      requests.push(recorded);
      const reply: ProviderReply = (queue ? queue.shift() : await handler?.(recorded)) ?? { text: 'ok' };
      if (isHang(reply)) return;
      await answer(response, recorded, reply);
    } catch (error) {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: String(error), type: 'test_server_error' } }));
    }
  });
  // Keep idle connections open: a client idle for seconds between calls (a compaction between
  // two model calls on a slow machine) must never reuse a socket the server is closing.
  server.keepAliveTimeout = 0;
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

/** The request as the tests read it: its body parsed when it is JSON. */
async function recordRequest(incoming: IncomingMessage, seq: number): Promise<RecordedRequest> {
  const rawBody = await readBody(incoming);
  let body: unknown;
  try {
    body = rawBody ? JSON.parse(rawBody) : undefined;
  } catch {
    body = undefined;
  }
  const path = (incoming.url ?? '/').split('?')[0] ?? '/';
  return {
    method: incoming.method ?? 'GET',
    path,
    endpoint: endpointOf(path),
    headers: { ...incoming.headers },
    body,
    rawBody,
    stream: (body as { stream?: unknown } | undefined)?.stream === true,
    seq,
  };
}

/** Answers `reply` in the wire format of the request's endpoint, after its delay. */
async function answer(
  response: ServerResponse,
  recorded: RecordedRequest,
  reply: Exclude<ProviderReply, HangReply>,
): Promise<void> {
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
          error: { message: `no route for ${recorded.method} ${recorded.path}`, type: 'not_found' },
        }),
      );
  }
}
