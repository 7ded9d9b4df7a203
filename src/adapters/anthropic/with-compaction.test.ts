import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  reportedInput,
  requestViolations,
  reusedIdLoop,
  STEPS,
  toolOutput,
  WINDOW,
} from '../../../test/support/tool-loop.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { readRequest, requestTokens } from '../../testing/agent-model-script.js';
import {
  type ProviderReply,
  type ProviderTestServer,
  type RecordedRequest,
  startProviderTestServer,
} from '../../testing/provider-test-server.js';
import { withCompaction } from './index.js';

type Params = Anthropic.MessageCreateParamsNonStreaming;
type Send = (client: Anthropic, params: Params) => Promise<Anthropic.Message>;

const SYSTEM = 'You are an SRE assistant. Check every host before answering.';
const tools: Anthropic.Tool[] = [
  {
    name: 'probe',
    description: 'Probe the hosts',
    input_schema: { type: 'object', properties: { step: { type: 'number' } } },
  },
];

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function newManager() {
  const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: WINDOW });
  const events: AnyCompactEvent[] = [];
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  return { manager, events };
}

async function start(override?: (request: RecordedRequest) => ProviderReply | undefined) {
  server = await startProviderTestServer({
    handler: reusedIdLoop({ tool: 'probe', ...(override ? { override } : {}) }),
  });
  return new Anthropic({ apiKey: 'test-key', baseURL: server.anthropicBaseURL, maxRetries: 0 });
}

/** Reads a streamed response's events into the message they describe. */
async function collect(stream: AsyncIterable<Anthropic.RawMessageStreamEvent>): Promise<Anthropic.Message> {
  let message: Anthropic.Message | undefined;
  const json: string[] = [];
  for await (const event of stream) {
    if (event.type === 'message_start') message = { ...event.message, content: [] };
    if (event.type === 'content_block_start') {
      message!.content.push({ ...event.content_block } as Anthropic.ContentBlock);
      json[event.index] = '';
    }
    if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
      json[event.index] += event.delta.partial_json;
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
      (message!.content[event.index] as Anthropic.TextBlock).text += event.delta.text;
    }
    if (event.type === 'content_block_stop' && json[event.index]) {
      (message!.content[event.index] as Anthropic.ToolUseBlock).input = JSON.parse(json[event.index]!);
    }
  }
  return message!;
}

const paths: Record<string, Send> = {
  'messages.create': (client, params) => client.messages.create(params),
  'messages.create({ stream: true })': async (client, params) =>
    collect(await client.messages.create({ ...params, stream: true })),
  'messages.create().withResponse()': async (client, params) => {
    const { data, response } = await client.messages.create(params).withResponse();
    expect(response.status).toBe(200);
    return data;
  },
  'messages.create().asResponse()': async (client, params) =>
    (await (await client.messages.create(params).asResponse()).json()) as Anthropic.Message,
  'messages.stream()': (client, params) => client.messages.stream(params).finalMessage(),
  'beta.messages.create': async (client, params) =>
    (await client.beta.messages.create(params as Anthropic.Beta.MessageCreateParamsNonStreaming)) as never,
  'beta.messages.stream()': async (client, params) =>
    (await client.beta.messages
      .stream(params as Anthropic.Beta.MessageCreateParamsNonStreaming)
      .finalMessage()) as never,
};

/** Runs one STEPS-step tool loop through `send`; returns the history. */
async function toolLoop(client: Anthropic, send: Send): Promise<Anthropic.MessageParam[]> {
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Probe every host, one at a time.' }];
  for (let step = 0; step <= STEPS; step++) {
    const reply = await send(client, {
      model: 'claude-sonnet-4-6',
      max_tokens: 512,
      system: SYSTEM,
      messages,
      tools,
    });
    messages.push({ role: 'assistant', content: reply.content });
    const uses = reply.content.filter((block) => block.type === 'tool_use');
    if (uses.length === 0) break;
    messages.push({
      role: 'user',
      content: uses.map((use) => ({
        type: 'tool_result' as const,
        tool_use_id: use.id,
        content: toolOutput(step),
      })),
    });
  }
  return messages;
}

describe(`withCompaction: every request path in a ${STEPS}-step loop`, () => {
  for (const [name, send] of Object.entries(paths)) {
    it(`${name} keeps every request under the window with sound pairs and one summary at most`, async () => {
      const { manager } = newManager();
      const client = withCompaction(await start(), manager, { sessionId: 'loop' });
      const history = await toolLoop(client, send);
      expect(history).toHaveLength(2 * STEPS + 2);
      expect(server!.requests).toHaveLength(STEPS + 1);
      expect(requestViolations(server!, manager, 'reported')).toEqual([]);
      // The raw history would not fit: the preflight did the work.
      expect(manager.estimate(history, { system: SYSTEM, tools }).total).toBeGreaterThan(3 * WINDOW);
      expect(readRequest(server!.requests.at(-1)!).system).toBe(SYSTEM);
      // Each response's reported input tokens reached the manager.
      expect(manager.lastReportedUsage('loop')?.inputTokens).toBe(reportedInput(server!.requests.at(-1)!));
    });
  }
});

describe('withCompaction: overflow recovery', () => {
  it('compacts against the limit the error reports and retries once, on create and on stream()', async () => {
    const { manager, events } = newManager();
    let rejected = 0;
    const raw = await start((request) => {
      if (request.seq % 10 !== 5) return undefined;
      rejected++;
      return { error: { status: 400, message: 'prompt is too long: 9100 tokens > 8000 maximum' } };
    });
    const client = withCompaction(raw, manager, { sessionId: 'overflow' });
    const paths = [
      (c: Anthropic, p: Params) => c.messages.create(p),
      (c: Anthropic, p: Params) => c.messages.stream(p).finalMessage(),
    ];
    for (const send of paths) {
      const before = server!.requests.length;
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: `Probe run ${before}` }];
      for (let step = 0; step < 12; step++) {
        const reply = await send(client, {
          model: 'claude-sonnet-4-6',
          max_tokens: 64,
          system: SYSTEM,
          messages,
          tools,
        });
        messages.push({ role: 'assistant', content: reply.content });
        const use = reply.content.find((block) => block.type === 'tool_use');
        messages.push({
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: use!.id, content: toolOutput(step) }],
        });
      }
    }
    expect(rejected).toBeGreaterThanOrEqual(2);
    const recoveries = events.filter(
      (event) =>
        event.name === 'compact.trigger_decision' && event.properties.note?.startsWith('overflow_recovery'),
    );
    expect(recoveries).toHaveLength(rejected);
    // Each retry is compacted well below the rejected request, within the reported limit mapped to our count.
    for (const request of server!.requests.filter((r) => r.seq % 10 === 5)) {
      const retry = server!.requests[request.seq]!; // seq is 1-based: the next request
      const sent = requestTokens(manager, readRequest(request));
      const retried = requestTokens(manager, readRequest(retry));
      expect(retried).toBeLessThanOrEqual(Math.floor(((8000 * sent) / 9100) * 0.95));
    }
  });

  it('surfaces any other error unchanged, with one request', async () => {
    const { manager } = newManager();
    const client = withCompaction(
      await start(() => ({ error: { status: 400, message: 'messages.0.content: invalid block' } })),
      manager,
      { sessionId: 'bad' },
    );
    const call = client.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await expect(call).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(call).rejects.toThrow('messages.0.content: invalid block');
    expect(server!.requests).toHaveLength(1);
  });

  it('retries an HTTP 413 once with a tighter budget, then surfaces it unchanged', async () => {
    const { manager } = newManager();
    const client = withCompaction(
      await start(() => ({
        error: { status: 413, message: 'Request exceeds the maximum size', type: 'request_too_large' },
      })),
      manager,
      { sessionId: 'huge' },
    );
    const messages: Anthropic.MessageParam[] = Array.from({ length: 12 }, (_, k) => ({
      role: k % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: toolOutput(k),
    }));
    const call = client.messages
      .create({ model: 'claude-sonnet-4-6', max_tokens: 8, messages })
      .withResponse();
    await expect(call).rejects.toMatchObject({
      status: 413,
      message: expect.stringContaining('maximum size'),
    });
    expect(server!.requests).toHaveLength(2);
    expect(server!.requests[1]!.rawBody.length).toBeLessThan(server!.requests[0]!.rawBody.length);
  });

  it('surfaces the provider error when even the tighter budget cannot hold the request', async () => {
    const { manager } = newManager();
    const client = withCompaction(
      await start(() => ({ error: { status: 413, message: 'Request exceeds the maximum size' } })),
      manager,
      { sessionId: 'tiny' },
    );
    const call = client.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await expect(call).rejects.toBeInstanceOf(Anthropic.APIError);
    await expect(call).rejects.toMatchObject({ status: 413 });
    expect(server!.requests).toHaveLength(1);
  });
});

describe('withCompaction: session ids and untouched parts', () => {
  it('requires a session id (no shared default), rejects a non-client, and leaves countTokens alone', async () => {
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: WINDOW });
    const raw = await start();
    const ids: string[] = [];
    const client = withCompaction(raw, manager, {
      sessionId: (params) => String(params.metadata?.user_id ?? ''),
      onCompaction: (_, id) => ids.push(id),
    });
    await client.messages.create({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      metadata: { user_id: 'thread-1' },
    });
    expect(ids).toEqual(['thread-1']);
    await expect(
      client.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toThrow(/sessionId/);
    expect(server!.requests).toHaveLength(1);
    expect(() => withCompaction(raw, manager, {} as never)).toThrow(/sessionId/);
    expect(() => withCompaction({} as Anthropic, manager, { sessionId: 's' })).toThrow('Anthropic client');
    // count_tokens is not a request the model answers: sent as given, never compacted.
    const history: Anthropic.MessageParam[] = Array.from({ length: 30 }, (_, k) => ({
      role: k % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: toolOutput(k),
    }));
    await client.messages.countTokens({ model: 'm', messages: history }).catch(() => undefined);
    const counted = server!.requests.at(-1)!;
    expect(counted.path).toBe('/v1/messages/count_tokens');
    expect((counted.body as { messages: unknown[] }).messages).toHaveLength(30);
    expect(client.baseURL).toBe(raw.baseURL);
  });
});
