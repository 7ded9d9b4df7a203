/**
 * The provider-neutral request and reply shapes of the provider test server, and what the
 * three wire formats share: defaults filled in from the request, tool-call arguments, deltas.
 */

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
  /**
   * Token usage. `inputTokens` is the request's whole input; `cacheReadTokens` and
   * `cacheWriteTokens` of it were read from or written to the prompt cache (reported in each
   * provider's own fields: Anthropic beside `input_tokens`, OpenAI inside `prompt_tokens`).
   * @default about 4 characters per token of the request body and the text, no cache
   */
  usage?: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number };
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

/** The `created` time of every response (fixed, so bodies are reproducible). */
export const FIXED_CREATED = 1_700_000_000;

function estimate(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** A tool call's arguments as JSON text. */
export function argumentsText(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

/** A tool call's arguments as an object (`{}` when the text is not JSON). */
export function argumentsObject(call: ScriptedToolCall): unknown {
  if (typeof call.arguments !== 'string') return call.arguments;
  try {
    return JSON.parse(call.arguments);
  } catch {
    return {};
  }
}

/** A reply with its defaults filled in from the request. */
export interface Resolved {
  model: string;
  text: string;
  toolCalls: ScriptedToolCall[];
  refusal: string | undefined;
  finish: NonNullable<ScriptedReply['finishReason']>;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  seq: number;
}

/** Fills in a reply's defaults (model, finish reason, usage) from the request. */
export function resolve(reply: ScriptedReply, request: RecordedRequest): Resolved {
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
    cacheReadTokens: reply.usage?.cacheReadTokens ?? 0,
    cacheWriteTokens: reply.usage?.cacheWriteTokens ?? 0,
    seq: request.seq,
  };
}

/** Splits text into the 16-character pieces streamed as deltas. */
export function splitText(text: string): string[] {
  if (text === '') return [];
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += 16) pieces.push(text.slice(i, i + 16));
  return pieces;
}
