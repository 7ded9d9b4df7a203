/**
 * Reads the usage a provider reports while its answer passes through to the client unchanged:
 * each chunk is handed on as it arrives (a stream's first byte is never held back) and only
 * looked at on the side. Server-sent events are read line by line, and only the lines that
 * mention `"usage"` are parsed; a JSON answer is kept (up to a bound) and parsed at its end.
 */
import type { ReportedUsage } from '../core/manager/manager-options.js';
import type { MessageFormat } from '../core/messages/message.js';

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
 * A pass-through stream that reports the answer's usage once it ended (`onUsage` is called at
 * most once, and only when some usage was found; never when the client went away first).
 */
export function usageTap(
  format: MessageFormat,
  streamed: boolean,
  onUsage: (usage: Usage) => void,
): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const usage: Usage = {};
  let line = '';
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const readLines = (text: string) => {
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      const whole = line + text.slice(start, end);
      line = '';
      start = end + 1;
      if (!whole.startsWith('data:') || !whole.includes('"usage"')) continue;
      try {
        usageOfEvent(format, JSON.parse(whole.slice(5)), usage);
      } catch {
        // Not JSON: nothing to read.
      }
    }
    line += text.slice(start);
    if (line.length > MAX_LINE_CHARS) line = '';
  };
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      if (streamed) readLines(decoder.decode(chunk, { stream: true }));
      else if (bytes + chunk.byteLength <= MAX_USAGE_BODY_BYTES) {
        chunks.push(chunk);
        bytes += chunk.byteLength;
      } else bytes = Number.POSITIVE_INFINITY;
    },
    flush() {
      if (streamed) readLines(`${decoder.decode()}\n`);
      else if (Number.isFinite(bytes)) {
        try {
          usageOfBody(format, JSON.parse(Buffer.concat(chunks).toString('utf8')), usage);
        } catch {
          // Not JSON: nothing to read.
        }
      }
      if (usage.inputTokens !== undefined) onUsage(usage);
    },
  });
}
