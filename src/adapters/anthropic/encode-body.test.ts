import Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { runSteps } from '../../core/time-slice.js';
import { encodeBodySteps, preEncodedOptions } from './encode-body.js';
import { withCompaction } from './index.js';

/**
 * Issue 47 point 2: the wrapper writes the request's JSON a message at a time instead of
 * leaving one `JSON.stringify` of it all to the SDK. The text must be the SDK's byte for byte.
 */
describe('encodeBodySteps', () => {
  const text = fc.string({ unit: 'binary', maxLength: 40 });
  const value = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.oneof(text, fc.constant('__proto__'), fc.constant('toString')), tie('value'), {
        maxKeys: 4,
      }),
    ),
  })).value;

  it('writes what JSON.stringify writes, a step per message', () => {
    fc.assert(
      fc.property(
        fc.dictionary(text, value, { maxKeys: 4 }),
        fc.array(value, { maxLength: 12 }),
        fc.integer({ min: 0, max: 4 }),
        (rest, messages, at) => {
          // `messages` anywhere among the other keys: its place is kept.
          const entries = Object.entries(rest).filter(([key]) => key !== 'messages');
          entries.splice(Math.min(at, entries.length), 0, ['messages', messages]);
          const body = Object.fromEntries(entries);
          const steps = encodeBodySteps(body);
          let pauses = 0;
          let next = steps.next();
          while (!next.done) {
            pauses++;
            next = steps.next();
          }
          expect(next.value).toBe(JSON.stringify(body));
          expect(pauses).toBeGreaterThanOrEqual(messages.length);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('writes functions and undefined among the messages as null, as an array does', () => {
    const body = {
      model: 'm',
      messages: [undefined, () => 1, { role: 'user', content: 'hi', x: undefined }],
    };
    expect(runSteps(encodeBodySteps(body))).toBe(JSON.stringify(body));
  });

  it('writes bodies of many pieces joined a chunk at a time the same way', () => {
    const messages = Array.from({ length: 12 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: [{ type: 'text', text: `${i} é\u{1F600}"\n`.repeat(7_000 * (i % 4)) }],
    }));
    const body = { model: 'm', messages, max_tokens: 9 };
    expect(JSON.stringify(body).length).toBeGreaterThan(4 * 256 * 1024);
    expect(runSteps(encodeBodySteps(body))).toBe(JSON.stringify(body));
  });

  it('gives nothing where the pieces could differ (a toJSON) or there is no messages array', () => {
    expect(runSteps(encodeBodySteps({ messages: [{ toJSON: () => 'x' }] }))).toBeUndefined();
    expect(runSteps(encodeBodySteps({ messages: [], toJSON: () => ({}) }))).toBeUndefined();
    expect(runSteps(encodeBodySteps({ messages: 'text' }))).toBeUndefined();
  });
});

describe('preEncodedOptions', () => {
  const options = () => ({ body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } });
  const named = {
    current: class Anthropic {
      buildBody() {}
    },
    // The 0.x core: no buildBody; its buildRequest would encode a string body again.
    old: class Anthropic {},
    bedrock: class AnthropicBedrock {
      buildBody() {}
    },
  };

  it("writes the body only for the SDK's current core and its Anthropic class", async () => {
    const written = await preEncodedOptions(new named.current(), options());
    expect(written.body).toBe(JSON.stringify(options().body));
    expect((written as { headers?: unknown }).headers).toEqual({ 'content-type': 'application/json' });
    for (const client of [new named.old(), new named.bedrock()]) {
      const kept = options();
      expect(await preEncodedOptions(client, kept)).toBe(kept);
    }
    const withMiddleware = { ...options(), middleware: [() => {}] };
    expect(await preEncodedOptions(new named.current(), withMiddleware)).toBe(withMiddleware);
  });
});

describe('withCompaction on the wire', () => {
  const messages = Array.from({ length: 40 }, (_, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `message ${i} with "quotes", a tab\t and é ✓ \u2028 ${'x'.repeat(i)}`,
  }));
  const params = {
    model: 'claude-sonnet-4-6',
    max_tokens: 256,
    system: [{ type: 'text' as const, text: 'Be brief.' }],
    metadata: { user_id: 'u1' },
    messages,
  };
  const reply = JSON.stringify({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-6',
    content: [{ type: 'text', text: 'ok' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 1, output_tokens: 1 },
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  /**
   * The body and content type the SDK sent, the body's type as middleware saw it, and how many
   * times the whole body (its messages an array) went through one `JSON.stringify`.
   */
  async function sent(middleware: boolean) {
    const stringify = JSON.stringify;
    let whole = 0;
    vi.spyOn(JSON, 'stringify').mockImplementation(((value: unknown, ...rest: never[]) => {
      const body = value as { model?: unknown; messages?: unknown } | null;
      if (body?.model === params.model && Array.isArray(body.messages) && body.messages.length === 40)
        whole++;
      return stringify(value, ...rest);
    }) as typeof JSON.stringify);
    let body: unknown;
    let contentType: string | null = null;
    const fetch = async (_url: unknown, init?: RequestInit) => {
      body = init?.body;
      contentType = new Headers(init?.headers).get('content-type');
      return new Response(reply, { headers: { 'content-type': 'application/json' } });
    };
    const seen: string[] = [];
    const client = new Anthropic({
      apiKey: 'test-key',
      fetch: fetch as never,
      maxRetries: 0,
      ...(middleware
        ? {
            middleware: [
              async (
                request: unknown,
                next: (request: unknown) => Promise<Response>,
                ctx: { options: { body: unknown } },
              ) => {
                seen.push(typeof ctx.options.body);
                return next(request);
              },
            ] as never,
          }
        : {}),
    });
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: 200_000 });
    await withCompaction(client, manager, { sessionId: 's', cacheBreakpoints: false }).messages.create(
      params,
    );
    await manager.shutdown();
    vi.restoreAllMocks();
    return { body, contentType, seen, whole };
  }

  it('sends the bytes the SDK would have written, with its content type', async () => {
    const own = await sent(false);
    const sdk = await sent(true);
    expect(typeof own.body).toBe('string');
    expect(own.body).toBe(sdk.body);
    expect(own.contentType).toBe('application/json');
    expect(own.contentType).toBe(sdk.contentType);
    expect(JSON.parse(own.body as string).messages).toHaveLength(40);
    // The wrapper wrote it a message at a time; the SDK encoded the object in one piece.
    expect(own.whole).toBe(0);
    expect(sdk.whole).toBe(1);
  });

  it('leaves the body an object for a client with middleware (middleware reads it as one)', async () => {
    expect((await sent(true)).seen).toEqual(['object']);
  });
});
