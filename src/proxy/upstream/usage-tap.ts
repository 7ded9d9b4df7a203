/**
 * Reads the usage a provider reports while its answer passes through to the client unchanged:
 * each chunk is handed on as it arrives (a stream's first byte is never held back) and only
 * looked at on the side. Server-sent events are read line by line, and only the lines that
 * mention `"usage"` are parsed; a JSON answer is kept (up to a bound) and parsed at its end.
 */
import type { ReportedUsage } from '../../core/manager/manager-options.js';
import type { MessageFormat } from '../../core/messages/message.js';

/** The largest JSON answer whose usage is read (a larger one passes through unread). */
export const MAX_USAGE_BODY_BYTES = 8 * 1024 * 1024;
/** The longest SSE line kept while looking for usage. */
const MAX_LINE_CHARS = 1024 * 1024;

type Usage = Partial<ReportedUsage>;
type Json = Record<string, unknown>;

const numberAt = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

function put(usage: Usage, key: keyof ReportedUsage, value: unknown): void {
  const number = numberAt(value);
  if (number !== undefined) usage[key] = number;
}

/** Chat Completions `usage`. */
function chatUsage(usage: Json | undefined, into: Usage): void {
  if (!usage || typeof usage !== 'object') return;
  put(into, 'inputTokens', usage.prompt_tokens);
  put(into, 'outputTokens', usage.completion_tokens);
  put(into, 'cachedInputTokens', (usage.prompt_tokens_details as Json | undefined)?.cached_tokens);
}

/** Responses `usage`. */
function responsesUsage(usage: Json | undefined, into: Usage): void {
  if (!usage || typeof usage !== 'object') return;
  put(into, 'inputTokens', usage.input_tokens);
  put(into, 'outputTokens', usage.output_tokens);
  put(into, 'cachedInputTokens', (usage.input_tokens_details as Json | undefined)?.cached_tokens);
}

/** Anthropic `usage` (`message_start` carries the input side, `message_delta` the output count). */
function anthropicUsage(usage: Json | undefined, into: Usage): void {
  if (!usage || typeof usage !== 'object') return;
  put(into, 'inputTokens', usage.input_tokens);
  put(into, 'cacheReadInputTokens', usage.cache_read_input_tokens);
  put(into, 'cacheCreationInputTokens', usage.cache_creation_input_tokens);
  put(into, 'outputTokens', usage.output_tokens);
}

/** The usage in one whole (not streamed) answer body. */
export function usageOfBody(format: MessageFormat, body: unknown, into: Usage = {}): Usage {
  const usage = (body as Json | null)?.usage as Json | undefined;
  if (format === 'openai-chat') chatUsage(usage, into);
  else if (format === 'openai-responses') responsesUsage(usage, into);
  else anthropicUsage(usage, into);
  return into;
}

/** Folds the usage of one SSE `data:` payload into `into`. */
export function usageOfEvent(format: MessageFormat, event: unknown, into: Usage): void {
  const data = event as Json | null;
  if (!data || typeof data !== 'object') return;
  if (format === 'openai-chat') chatUsage(data.usage as Json | undefined, into);
  else if (format === 'openai-responses') {
    const response = data.response as Json | undefined;
    if (response?.usage) responsesUsage(response.usage as Json, into);
  } else if (data.type === 'message_start')
    anthropicUsage((data.message as Json | undefined)?.usage as Json, into);
  else if (data.type === 'message_delta') anthropicUsage(data.usage as Json | undefined, into);
}

/**
 * Reads the usage of one answer chunk by chunk, on the side: `push` each chunk as it passes,
 * `end` once the answer ended (the usage found, or `undefined`).
 */
export class UsageReader {
  readonly #format: MessageFormat;
  readonly #streamed: boolean;
  readonly #decoder = new TextDecoder();
  readonly #usage: Usage = {};
  #line = '';
  readonly #chunks: Uint8Array[] = [];
  #bytes = 0;

  constructor(format: MessageFormat, streamed: boolean) {
    this.#format = format;
    this.#streamed = streamed;
  }

  push(chunk: Uint8Array): void {
    if (this.#streamed) this.#readLines(this.#decoder.decode(chunk, { stream: true }));
    else if (this.#bytes + chunk.byteLength <= MAX_USAGE_BODY_BYTES) {
      this.#chunks.push(chunk);
      this.#bytes += chunk.byteLength;
    } else this.#bytes = Number.POSITIVE_INFINITY;
  }

  end(): Usage | undefined {
    if (this.#streamed) this.#readLines(`${this.#decoder.decode()}\n`);
    else if (Number.isFinite(this.#bytes)) {
      try {
        usageOfBody(this.#format, JSON.parse(Buffer.concat(this.#chunks).toString('utf8')), this.#usage);
      } catch {
        // Not JSON: nothing to read.
      }
    }
    return this.#usage.inputTokens === undefined ? undefined : this.#usage;
  }

  #readLines(text: string): void {
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      const whole = this.#line + text.slice(start, end);
      this.#line = '';
      start = end + 1;
      if (!whole.startsWith('data:') || !whole.includes('"usage"')) continue;
      try {
        usageOfEvent(this.#format, JSON.parse(whole.slice(5)), this.#usage);
      } catch {
        // Not JSON: nothing to read.
      }
    }
    this.#line += text.slice(start);
    if (this.#line.length > MAX_LINE_CHARS) this.#line = '';
  }
}

/**
 * A pass-through stream that reports the answer's usage once it ended (`onUsage` is called at
 * most once, and only when some usage was found; never when the client went away first).
 */
export function usageTap(
  format: MessageFormat,
  streamed: boolean,
  onUsage: (usage: Usage) => void,
): TransformStream<Uint8Array, Uint8Array> {
  const reader = new UsageReader(format, streamed);
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      reader.push(chunk);
    },
    flush() {
      const usage = reader.end();
      if (usage !== undefined) onUsage(usage);
    },
  });
}
