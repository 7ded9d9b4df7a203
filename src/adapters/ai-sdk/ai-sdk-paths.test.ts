import { createOpenAI } from '@ai-sdk/openai';
import {
  APICallError,
  generateObject,
  generateText,
  type ModelMessage,
  stepCountIs,
  streamText,
  ToolLoopAgent,
  tool,
  wrapLanguageModel,
} from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  contextLengthExceeded,
  reportedInput,
  requestViolations,
  reusedIdLoop,
  STEPS,
  toolOutput,
  WINDOW,
} from '../../../test/support/tool-loop.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { readRequest } from '../../testing/agent-model-script.js';
import {
  type ProviderReply,
  type ProviderTestServer,
  type RecordedRequest,
  startProviderTestServer,
} from '../../testing/provider-test-server.js';
import { callToolSchemas, compactionMiddleware, compactionPrepareStep } from './index.js';

const SYSTEM = 'You are an SRE assistant. Check every host before answering.';
/** A long system prompt (about 2,600 tokens) that prepareStep never sees. */
const LONG_SYSTEM = Array.from(
  { length: 130 },
  (_, k) => `Rule ${k}: never restart host web-${k} before checking its queue depth.`,
).join('\n');

let step = 0;
const tools = {
  probe: tool({
    description: 'Probe the hosts',
    inputSchema: z.object({ step: z.number() }),
    execute: async () => toolOutput(step++),
  }),
};

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function newManager() {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
  const events: AnyCompactEvent[] = [];
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  return { manager, events };
}

async function start(override?: (request: RecordedRequest) => ProviderReply | undefined) {
  server = await startProviderTestServer({
    handler: reusedIdLoop({ tool: 'probe', ...(override ? { override } : {}) }),
  });
  return createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
}

function wrapped(provider: ReturnType<typeof createOpenAI>, manager: CompactManager, sessionId: string) {
  return wrapLanguageModel({
    model: provider.chat('gpt-4o'),
    middleware: compactionMiddleware(manager, { sessionId }),
  });
}

const prompt: ModelMessage[] = [{ role: 'user', content: 'Probe every host, one at a time.' }];

function expectLoopSound(manager: CompactManager, sessionId: string) {
  expect(server!.requests).toHaveLength(STEPS + 1);
  expect(requestViolations(server!, manager)).toEqual([]);
  expect(manager.lastReportedUsage(sessionId)?.inputTokens).toBe(reportedInput(server!.requests.at(-1)!));
}

describe(`AI SDK: every path in a ${STEPS}-step loop with reused call ids`, () => {
  it('generateText through the middleware', async () => {
    const { manager } = newManager();
    const model = wrapped(await start(), manager, 'gen');
    const result = await generateText({
      model,
      system: SYSTEM,
      tools,
      messages: prompt,
      stopWhen: stepCountIs(STEPS + 5),
    });
    expect(result.steps).toHaveLength(STEPS + 1);
    expectLoopSound(manager, 'gen');
    expect(readRequest(server!.requests.at(-1)!).entries[0]).toMatchObject({ kind: 'system', text: SYSTEM });
  });

  it('streamText through the middleware', async () => {
    const { manager } = newManager();
    const model = wrapped(await start(), manager, 'stream');
    const result = streamText({
      model,
      system: SYSTEM,
      tools,
      messages: prompt,
      stopWhen: stepCountIs(STEPS + 5),
    });
    expect(await result.text).toContain('Done after');
    expect(server!.requests.every((request) => request.stream)).toBe(true);
    expectLoopSound(manager, 'stream');
  });

  it(`generateObject over the history of a ${STEPS}-step loop`, async () => {
    const { manager } = newManager();
    const provider = await start((request) =>
      (request.body as { response_format?: unknown }).response_format
        ? { text: JSON.stringify({ healthy: 40 }) }
        : undefined,
    );
    const model = wrapped(provider, manager, 'object');
    const loop = await generateText({
      model,
      system: SYSTEM,
      tools,
      messages: prompt,
      stopWhen: stepCountIs(STEPS + 5),
    });
    const { object } = await generateObject({
      model,
      system: SYSTEM,
      schema: z.object({ healthy: z.number() }),
      messages: [
        ...prompt,
        ...loop.response.messages,
        { role: 'user', content: 'How many hosts are healthy?' },
      ],
    });
    expect(object).toEqual({ healthy: 40 });
    expect(server!.requests).toHaveLength(STEPS + 2);
    expect(requestViolations(server!, manager)).toEqual([]);
    expect(manager.lastReportedUsage('object')?.inputTokens).toBe(reportedInput(server!.requests.at(-1)!));
  });

  it('a ToolLoopAgent with compactionPrepareStep counts the system prompt it never sees', async () => {
    const { manager } = newManager();
    const provider = await start();
    // Stored in a variable first: the helper's type fits any tool set.
    const prepareStep = compactionPrepareStep(manager, {
      sessionId: 'agent',
      system: LONG_SYSTEM,
      tools: callToolSchemas([{ name: 'probe', description: 'Probe the hosts', inputSchema: {} }]),
    });
    const agent = new ToolLoopAgent({
      model: provider.chat('gpt-4o'),
      instructions: LONG_SYSTEM,
      tools,
      stopWhen: stepCountIs(STEPS + 5),
      prepareStep,
    });
    const result = await agent.generate({ prompt: 'Probe every host, one at a time.' });
    expect(result.steps).toHaveLength(STEPS + 1);
    expect(manager.estimate([], { system: LONG_SYSTEM }).total).toBeGreaterThan(2000);
    expect(requestViolations(server!, manager)).toEqual([]);
    // The previous step's usage is fed at each step: the last fed is the next-to-last request's.
    expect(manager.lastReportedUsage('agent')?.inputTokens).toBe(reportedInput(server!.requests.at(-2)!));
  });
});

describe('AI SDK: overflow recovery', () => {
  /** The provider's real window is 4,000 tokens while the manager was told 8,000. */
  const LIMIT = 4000;
  const tooLong = (tokens: number) => contextLengthExceeded(LIMIT, tokens);

  it('compacts against the reported limit and retries once, in generateText and streamText', async () => {
    const { manager, events } = newManager();
    const provider = await start((request) =>
      reportedInput(request) > LIMIT ? tooLong(reportedInput(request)) : undefined,
    );
    const model = wrapped(provider, manager, 'recover');
    await generateText({ model, system: SYSTEM, tools, messages: prompt, stopWhen: stepCountIs(STEPS + 5) });
    const streamed = streamText({
      model: wrapped(provider, manager, 'recover-stream'),
      system: SYSTEM,
      tools,
      messages: [{ role: 'user', content: 'Probe them again.' }],
      stopWhen: stepCountIs(STEPS + 5),
    });
    expect(await streamed.text).toContain('Done after');
    const rejected = server!.requests.filter((request) => reportedInput(request) > LIMIT);
    expect(rejected.some((request) => request.stream)).toBe(true);
    expect(rejected.some((request) => !request.stream)).toBe(true);
    const recoveries = events.filter(
      (event) =>
        event.name === 'compact.trigger_decision' && event.properties.note?.startsWith('overflow_recovery'),
    );
    expect(recoveries).toHaveLength(rejected.length);
    // Each rejection is followed by one retry the provider accepts, system prompt intact.
    for (const request of rejected) {
      const retry = server!.requests[request.seq]!;
      expect(reportedInput(retry)).toBeLessThanOrEqual(LIMIT);
      expect(readRequest(retry).entries[0]).toMatchObject({ kind: 'system', text: SYSTEM });
    }
  });

  it('surfaces any other error unchanged', async () => {
    const { manager } = newManager();
    const provider = await start(() => ({
      error: { status: 400, message: 'Invalid schema for function probe' },
    }));
    const model = wrapped(provider, manager, 'bad');
    const call = generateText({ model, tools, messages: prompt, maxRetries: 0 });
    await expect(call).rejects.toSatisfy(
      (error) => APICallError.isInstance(error) && error.message === 'Invalid schema for function probe',
    );
    expect(server!.requests).toHaveLength(1);
  });
});
