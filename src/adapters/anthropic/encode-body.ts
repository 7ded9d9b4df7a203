/**
 * The request body written as JSON a message at a time (issue 47 point 2). The SDK encodes the
 * body it is handed with one `JSON.stringify` (its `FallbackEncoder`): a 16k-message request is
 * 5.6 MB, 19-33 ms of CPU in one piece on the caller's loop. Handed a string with a
 * `content-type` header, the SDK sends it as it is (`buildBody`), so the wrapper writes the same
 * text itself, a turn of the loop between pieces.
 *
 * Only for a plain `Anthropic` client of the SDK's current core (1.x; `buildBody`) with no
 * middleware: middleware reads `ctx.options.body` as
 * an object (the SDK's `betaRefusalFallbackMiddleware` stands down on a string), and the
 * Bedrock and Vertex clients read `options.body.model` when they build the request. Anything
 * else keeps the object body, as before.
 */
import { randomBytes } from 'node:crypto';
import { runStepsYielding, type Steps, type TimeSlice } from '../../core/time-slice.js';

/** The brand of the SDK's own header lists (`buildHeaders`' result; `Symbol.for`, so shared by every copy). */
const NULLABLE_HEADERS = Symbol.for('brand.privateNullableHeaders');

interface NullableHeaders {
  values: Headers;
  nulls: Set<string>;
}

type RequestOptions = { body?: unknown; headers?: unknown; [key: string]: unknown };

/**
 * True when the request built by `client` may carry a body the wrapper encoded: the SDK's
 * current core (its `buildBody` sends a string with a content type as it is; the 0.x core's
 * `buildRequest` would encode the string again, as a JSON string), the `Anthropic` class itself,
 * no middleware.
 */
function plainClient(client: object, options: RequestOptions): boolean {
  const c = client as { middleware?: unknown; buildBody?: unknown };
  const requestMiddleware = options.middleware as unknown[] | undefined;
  return (
    typeof c.buildBody === 'function' &&
    Object.getPrototypeOf(client)?.constructor?.name === 'Anthropic' &&
    (c.middleware === undefined || (Array.isArray(c.middleware) && c.middleware.length === 0)) &&
    (requestMiddleware === undefined || (Array.isArray(requestMiddleware) && requestMiddleware.length === 0))
  );
}

/**
 * The request's headers with `content-type: application/json` (what the SDK adds for an
 * object body), or undefined when they are in a form this does not rewrite or already say
 * something of the content type.
 */
function withJsonContentType(headers: unknown): unknown {
  if (headers === undefined || headers === null) return { 'content-type': 'application/json' };
  if (typeof headers !== 'object' || !(NULLABLE_HEADERS in headers)) return undefined;
  const { values, nulls } = headers as unknown as NullableHeaders;
  if (!(values instanceof Headers) || !(nulls instanceof Set)) return undefined;
  if (values.has('content-type') || nulls.has('content-type')) return undefined;
  const copy = new Headers(values);
  copy.set('content-type', 'application/json');
  return { [NULLABLE_HEADERS]: true, values: copy, nulls: new Set(nulls) };
}

/** Characters of JSON joined into one piece at a time. */
const CHUNK_CHARS = 256 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object';

/**
 * `JSON.stringify(body)` written a message at a time (a step after each), or undefined when
 * the pieces could differ from it: a `toJSON` on the body, its messages array or a message,
 * or a value that holds the placeholder of the messages.
 */
export function* encodeBodySteps(body: Record<string, unknown>): Steps<string | undefined> {
  const messages = body.messages;
  if (typeof body.toJSON === 'function' || !Array.isArray(messages) || 'toJSON' in messages) return undefined;
  const placeholder = `\u0000messages-${randomBytes(12).toString('hex')}`;
  const marker = JSON.stringify(placeholder);
  const skeleton = JSON.stringify({ ...body, messages: placeholder });
  const at = skeleton.indexOf(marker);
  if (at < 0 || skeleton.indexOf(marker, at + 1) >= 0) return undefined;
  // Joined 256 KB at a time, each in a step: one join of 32k pieces at the end was 5-11 ms.
  const chunks: string[] = [];
  let parts = [skeleton.slice(0, at), '['];
  let length = 0;
  for (let index = 0; index < messages.length; index++) {
    yield;
    const message: unknown = messages[index];
    if (isObject(message) && typeof message.toJSON === 'function') return undefined;
    if (index > 0) parts.push(',');
    // An array writes `null` where `JSON.stringify` of the value alone gives undefined.
    const json = JSON.stringify(message) ?? 'null';
    parts.push(json);
    length += json.length;
    if (length >= CHUNK_CHARS) {
      yield;
      chunks.push(parts.join(''));
      parts = [];
      length = 0;
    }
  }
  parts.push(']', skeleton.slice(at + marker.length));
  chunks.push(parts.join(''));
  yield;
  return chunks.join('');
}

/**
 * `options` with its object body replaced by the same JSON text, written in slices, and the
 * content type the SDK would have added; `options` itself when the client or the body is not
 * one this applies to (see the file's comment) or the body cannot be written so.
 */
export async function preEncodedOptions<O extends RequestOptions>(
  client: object,
  options: O,
  slice?: TimeSlice,
): Promise<O> {
  const { body } = options;
  if (!isObject(body) || Array.isArray(body) || !plainClient(client, options)) return options;
  const headers = withJsonContentType(options.headers);
  if (headers === undefined) return options;
  let text: string | undefined;
  try {
    text = await runStepsYielding(encodeBodySteps(body), slice);
  } catch {
    // A value JSON cannot write (a BigInt, a cycle): the SDK's own encoding throws as before.
    return options;
  }
  return text === undefined ? options : { ...options, body: text, headers };
}
