/**
 * The machinery behind `withCompaction`: a `messages` resource whose every request to
 * `POST /v1/messages` (create, `stream: true`, `stream()`, `parse()`, beta) is compacted first,
 * while the SDK's own `APIPromise` is returned untouched (`.withResponse()`, `.asResponse()`).
 *
 * The SDK's resource methods build the request synchronously and hand `client.post()` the
 * request options, which the client awaits; the resource here sees a client whose `post` awaits
 * the compaction before the options reach the real client. A rejection for length is retried
 * once, compacted against the limit the error reports, inside the same `APIPromise`.
 */

import { isCompactError } from '../../core/errors.js';
import type { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactionResult, CompactOptions } from '../../core/manager/manager-options.js';
import { replyTokensOf } from '../../core/preflight/body/reply-tokens.js';
import { nextTurn } from '../../core/time-slice.js';
import { compactForRetry, contextOverflowOf, feedUsage } from '../overflow-recovery.js';
import { type CacheBreakpointsOption, placeBreakpointsInSlices } from './cache-breakpoints.js';
import { preEncodedOptions } from './encode-body.js';

/** What the wrapper needs to know about one call. */
export interface MessagesCallContext {
  manager: CompactManager;
  /** The manager's session id for these parameters. */
  sessionId: (params: Record<string, unknown>) => string;
  onCompaction?: ((result: CompactionResult<unknown>, sessionId: string) => void) | undefined;
  /** Prompt-cache breakpoints the integration places (see `placeBreakpoints`). */
  cacheBreakpoints?: CacheBreakpointsOption | undefined;
}

type RequestOptions = { body?: Record<string, unknown>; signal?: AbortSignal; [key: string]: unknown };
type Post = (path: string, options?: unknown) => unknown;
type ApiPromiseLike = Promise<unknown> & {
  responsePromise: Promise<{ options: { stream?: boolean } }>;
  parseResponse: (client: unknown, props: unknown) => Promise<unknown>;
};
type ApiPromiseClass = new (
  client: unknown,
  responsePromise: Promise<unknown>,
  parse: (client: unknown, props: unknown) => Promise<unknown>,
) => unknown;

function isMessagesPath(path: string): boolean {
  return path === '/v1/messages' || path.startsWith('/v1/messages?');
}

/** The client as the resource sees it: `post` to /v1/messages transforms the options first. */
function interceptingClient(
  client: object,
  transform: (options: RequestOptions) => Promise<RequestOptions>,
): object {
  return new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === 'post') {
        const post = value as Post;
        return (path: string, options?: unknown) =>
          isMessagesPath(path)
            ? post.call(
                target,
                path,
                Promise.resolve(options as RequestOptions).then((o) => transform(o)),
              )
            : post.call(target, path, options);
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

interface Attempt {
  sessionId?: string;
  messages?: readonly unknown[];
  compactOptions?: CompactOptions;
  sentTokens?: number;
}

function compactOptionsOf(body: Record<string, unknown>, signal: AbortSignal | undefined): CompactOptions {
  return {
    format: 'anthropic',
    ...(body.system === undefined ? {} : { system: body.system as string | unknown[] }),
    ...(Array.isArray(body.tools) ? { tools: body.tools } : {}),
    ...replyTokensOf(body.max_tokens),
    ...(signal ? { signal } : {}),
  };
}

/**
 * Wraps a stream's iterator to feed the usage to the manager once: the input and cache figures
 * of `message_start` with the output count of the last `message_delta`, at `message_stop` (or
 * when the stream ends without one).
 */
function feedStreamUsage(stream: unknown, manager: CompactManager, sessionId: string): void {
  const s = stream as { iterator?: () => AsyncIterator<unknown> };
  if (typeof s?.iterator !== 'function') return;
  const original = s.iterator.bind(stream);
  s.iterator = async function* () {
    const iterator = original();
    let usage: Record<string, number> | undefined;
    const feed = () => {
      if (usage) feedAnthropicUsage(manager, sessionId, usage);
      usage = undefined;
    };
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        const event = next.value as {
          type?: string;
          message?: { usage?: Record<string, number> };
          usage?: Record<string, number>;
        };
        if (event?.type === 'message_start' && event.message?.usage) usage = { ...event.message.usage };
        if (event?.type === 'message_delta' && usage && typeof event.usage?.output_tokens === 'number')
          usage.output_tokens = event.usage.output_tokens;
        if (event?.type === 'message_stop') feed();
        yield next.value;
      }
    } finally {
      feed();
    }
  } as () => AsyncIterator<unknown>;
}

/** Feeds an Anthropic `usage` object (input, cache read, cache creation and output tokens). */
export function feedAnthropicUsage(
  manager: CompactManager,
  sessionId: string,
  usage: Record<string, number | null | undefined> | undefined,
): void {
  if (!usage) return;
  feedUsage(manager, sessionId, {
    ...(typeof usage.input_tokens === 'number' ? { inputTokens: usage.input_tokens } : {}),
    ...(typeof usage.cache_read_input_tokens === 'number'
      ? { cacheReadInputTokens: usage.cache_read_input_tokens }
      : {}),
    ...(typeof usage.cache_creation_input_tokens === 'number'
      ? { cacheCreationInputTokens: usage.cache_creation_input_tokens }
      : {}),
    ...(typeof usage.output_tokens === 'number' ? { outputTokens: usage.output_tokens } : {}),
  });
}

/**
 * Feeds the usage of a JSON (not streamed) response, read from a clone of the body so that
 * `.asResponse()` callers, who read the body themselves, get it fed too.
 */
function feedJsonUsage(props: unknown, manager: CompactManager, sessionId: string): void {
  const { response, options } = props as { response?: Response; options?: { stream?: boolean } };
  if (options?.stream || typeof response?.clone !== 'function') return;
  response
    .clone()
    .json()
    .then(
      (body: unknown) =>
        feedAnthropicUsage(manager, sessionId, (body as { usage?: Record<string, number> })?.usage),
      () => {},
    );
}

/**
 * A `create` that compacts, records usage and recovers from one overflow, returning the
 * SDK's `APIPromise`.
 */
function compactingCreate(resource: Record<string, unknown>, context: MessagesCallContext) {
  const originalCreate = resource.create as (params: unknown, options?: unknown) => ApiPromiseLike;
  const client = resource._client as object;
  const send = (params: unknown, requestOptions: unknown, attempt: Attempt, retryOf?: Attempt) => {
    const transform = async (options: RequestOptions): Promise<RequestOptions> => {
      const body = options.body ?? {};
      const sessionId = context.sessionId(params as Record<string, unknown>);
      const messages = body.messages as readonly unknown[];
      const compactOptions = compactOptionsOf(body, options.signal);
      let result: CompactionResult<unknown>;
      if (retryOf?.messages && retryOf.sentTokens !== undefined) {
        const overflow = retryOf as Attempt & { overflow: NonNullable<ReturnType<typeof contextOverflowOf>> };
        ({ result } = await compactForRetry(context.manager, sessionId, messages, compactOptions, {
          overflow: overflow.overflow,
          sentTokens: retryOf.sentTokens,
          integration: 'anthropic',
        }));
      } else {
        result = await context.manager.compact(sessionId, messages, compactOptions);
      }
      Object.assign(attempt, { sessionId, messages, compactOptions, sentTokens: result.tokensAfter });
      context.onCompaction?.(result, sessionId);
      // The breakpoints' passes over the messages in slices, then the body's JSON written a
      // message at a time (encode-body.ts; the SDK's own encoding is one `JSON.stringify` of
      // it all), each in turns of their own apart from the compaction's last step.
      await nextTurn();
      const placed = await placeBreakpointsInSlices(
        { ...body, messages: result.messages },
        context.cacheBreakpoints ?? 'auto',
      );
      await nextTurn();
      const encoded = await preEncodedOptions(client, { ...options, body: placed });
      if (encoded.body !== placed) await nextTurn();
      return encoded;
    };
    const scoped = Object.create(resource, { _client: { value: interceptingClient(client, transform) } });
    return originalCreate.call(scoped, params, requestOptions);
  };
  return (params: unknown, requestOptions?: unknown) => {
    const attempt: Attempt = {};
    const retried: Attempt = {};
    const first = send(params, requestOptions, attempt);
    let active = first;
    const responsePromise = first.responsePromise.catch((error: unknown) => {
      const overflow = contextOverflowOf(error);
      if (!overflow || attempt.messages === undefined) throw error;
      active = send(params, requestOptions, retried, { ...attempt, overflow } as Attempt);
      // When even the tighter compaction cannot fit, the provider's error is the one to see.
      return active.responsePromise.catch((retryError: unknown) => {
        throw isCompactError(retryError) ? error : retryError;
      });
    });
    const sessionOf = () => attempt.sessionId ?? retried.sessionId;
    const fed = responsePromise.then((props) => {
      const sessionId = sessionOf();
      if (sessionId !== undefined) feedJsonUsage(props, context.manager, sessionId);
      return props;
    });
    const parse = async (c: unknown, props: unknown) => {
      const data = await active.parseResponse(c, props);
      const sessionId = sessionOf();
      if (sessionId !== undefined && (props as { options?: { stream?: boolean } }).options?.stream)
        feedStreamUsage(data, context.manager, sessionId);
      return data;
    };
    const APIPromise = first.constructor as ApiPromiseClass;
    return new APIPromise(client, fed, parse);
  };
}

/**
 * A proxy of an Anthropic `messages` resource (`client.messages` or `client.beta.messages`)
 * whose `create` compacts; every other method runs with the proxy as `this`, so `stream()` and
 * `parse()` (which call `this.create`) are compacted too.
 */
export function compactingMessages<R extends object>(resource: R, context: MessagesCallContext): R {
  const create = compactingCreate(resource as Record<string, unknown>, context);
  const proxy: R = new Proxy(resource, {
    get(target, property) {
      if (property === 'create') return create;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(proxy) : value;
    },
  });
  return proxy;
}
