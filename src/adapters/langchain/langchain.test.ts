import { ToolMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent, tool } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  contextLengthExceeded,
  positionalPairProblems,
  reportedInput,
  requestViolations,
  reusedIdLoop,
  toolOutput,
  WINDOW,
} from '../../../test/support/tool-loop.js';
import { isCompactError } from '../../core/errors.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactPolicy } from '../../core/policy.js';
import { EmbeddedSummarizer } from '../../core/summary/embedded-summarizer.js';
import type { SummarizeRequest, Summarizer } from '../../core/summary/summarizer.js';
import { readRequest, requestTokens } from '../../testing/agent-model-script.js';
import {
  type ProviderReply,
  type ProviderTestServer,
  type RecordedRequest,
  startProviderTestServer,
} from '../../testing/provider-test-server.js';
import { compactionMiddleware } from './index.js';

/** Model calls with a tool call in one agent run (then one final answer). */
const STEPS = 40;
const SYSTEM = 'You are an SRE agent. Probe every host before answering; never restart a host.';

class CountingSummarizer implements Summarizer {
  readonly name = 'counting';
  readonly #inner = new EmbeddedSummarizer();
  calls = 0;
  summarize(request: SummarizeRequest) {
    this.calls++;
    return this.#inner.summarize(request);
  }
}

let step = 0;
const probe = tool(async () => toolOutput(step++), {
  name: 'probe',
  description: 'Probe the next host and return its status log',
  schema: z.object({ step: z.number() }),
});

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  step = 0;
});

function newManager(policy: Partial<CompactPolicy> = {}) {
  const summarizer = new CountingSummarizer();
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW, summarizer, policy });
  const events: AnyCompactEvent[] = [];
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  return { manager, events, summarizer };
}

async function start(override?: (request: RecordedRequest) => ProviderReply | undefined) {
  server = await startProviderTestServer({
    handler: reusedIdLoop({
      tool: 'probe',
      steps: STEPS,
      idFor: (n) => `call_${n}`,
      ...(override ? { override } : {}),
    }),
  });
  return new ChatOpenAI({
    model: 'gpt-4o',
    apiKey: 'test-key',
    maxRetries: 0,
    configuration: { baseURL: server.openaiBaseURL },
  });
}

function agentWith(model: ChatOpenAI, manager: CompactManager, sessionId: string, counted: number[] = []) {
  return createAgent({
    model,
    tools: [probe],
    systemPrompt: SYSTEM,
    middleware: [
      compactionMiddleware(manager, {
        sessionId,
        onCompaction: (result) => counted.push(result.tokensAfter),
      }),
    ],
  });
}

const PROMPT = 'Probe every host, one at a time, then report.';

/** The default policy (old tool outputs cleared first), and one that must summarize them. */
const LOOPS: { name: string; policy: Partial<CompactPolicy> }[] = [
  { name: 'default policy', policy: {} },
  { name: 'tool outputs never cleared (summarized)', policy: { clearExcludeTools: ['probe'] } },
];

describe(`LangChain createAgent: a ${STEPS}-step tool loop in a ${WINDOW}-token window`, () => {
  it.each(LOOPS)(
    '$name: every request within the window, pairs whole, state whole, usage recorded',
    async ({ name, policy }) => {
      const { manager, events, summarizer } = newManager(policy);
      const counted: number[] = [];
      const agent = agentWith(await start(), manager, 'lc-loop', counted);
      const result = await agent.invoke(
        { messages: [{ role: 'user', content: PROMPT }] },
        { recursionLimit: 500 },
      );
      const requests = server!.requests;
      expect(requests).toHaveLength(STEPS + 1);

      // Every request: within the window by the manager's count, one summary at most, pairs whole.
      const sizes = requests.map((request) => requestTokens(manager, readRequest(request)));
      const over = sizes.filter((tokens) => tokens > WINDOW).length;
      // What the manager counted for each call is exactly what ChatOpenAI sent.
      expect(sizes).toEqual(counted);
      expect(requestViolations(server!, manager)).toEqual([]);
      for (const request of requests) expect(positionalPairProblems(request)).toEqual([]);
      // The system prompt and the tool schema go with (and are counted in) every request.
      for (const request of requests) {
        const view = readRequest(request);
        expect(view.entries[0]).toMatchObject({ kind: 'system', text: SYSTEM });
        expect(view.tools).toHaveLength(1);
      }
      // Several compactions were needed: the raw loop is over four windows.
      const compactions = events.filter((event) => event.name === 'compact.pruned_messages').length;
      expect(compactions).toBeGreaterThanOrEqual(2);

      // The agent's state holds the full history, every tool output verbatim.
      expect(result.messages).toHaveLength(1 + 2 * STEPS + 1);
      const outputs = result.messages.filter((message) => ToolMessage.isInstance(message));
      expect(outputs.map((message) => message.content)).toEqual(
        Array.from({ length: STEPS }, (_, n) => toolOutput(n)),
      );
      const full = manager.estimate([], { system: SYSTEM }).total + STEPS * 600;
      expect(full).toBeGreaterThan(3 * WINDOW);

      // Usage: every response's reported input reached the manager.
      expect(manager.lastReportedUsage('lc-loop')?.inputTokens).toBe(reportedInput(requests.at(-1)!));
      expect(manager.costSnapshot('lc-loop')?.requests).toBe(STEPS + 1);

      const per100 = (100 * summarizer.calls) / STEPS;
      console.log(
        `LangChain createAgent, ${STEPS}-step loop, ${WINDOW}-token window, ${name}: ${compactions} compactions, summarizer calls per 100 steps ${per100.toFixed(1)}, requests over the window ${over} (largest ${Math.max(...sizes)})`,
      );
      expect(over).toBe(0);
      // The issue-9 target (bench/cascade.ts) holds for the default policy; without clearing,
      // every old output must be summarized (about one summary per four steps here).
      expect(per100).toBeLessThanOrEqual(policy.clearExcludeTools ? 30 : 10);
    },
  );

  it('records cache reads from usage_metadata', async () => {
    const { manager } = newManager();
    const usage = { inputTokens: 10_000, outputTokens: 40, cacheReadTokens: 8_000 };
    const model = await start((request) =>
      readRequest(request).entries.some((entry) => entry.kind === 'tool_result')
        ? { text: 'done', usage }
        : { toolCalls: [{ id: 'call_a', name: 'probe', arguments: { step: 0 } }], usage },
    );
    await agentWith(model, manager, 'lc-cache').invoke({
      messages: [{ role: 'user', content: 'probe once' }],
    });
    expect(manager.costSnapshot('lc-cache')).toMatchObject({
      requests: 2,
      inputTokens: 20_000,
      cacheReadTokens: 16_000,
      outputTokens: 80,
    });
  });
});

describe('LangChain createAgent: streamed, and across invocations of a checkpointed thread', () => {
  it('compacts streamed model calls and feeds their usage', async () => {
    const { manager } = newManager();
    const agent = agentWith(await start(), manager, 'lc-stream');
    const stream = await agent.stream(
      { messages: [{ role: 'user', content: PROMPT }] },
      { streamMode: 'messages', recursionLimit: 500 },
    );
    let chunks = 0;
    for await (const _chunk of stream) chunks++;
    expect(chunks).toBeGreaterThan(STEPS);
    const requests = server!.requests;
    expect(requests).toHaveLength(STEPS + 1);
    expect(requests.every((request) => request.stream)).toBe(true);
    expect(requestViolations(server!, manager)).toEqual([]);
    expect(manager.costSnapshot('lc-stream')?.requests).toBe(STEPS + 1);
  });

  it('resumes the thread: the checkpoint keeps the full history, the manager its summary', async () => {
    const { manager, events } = newManager({ clearExcludeTools: ['probe'] });
    const model = await start();
    const agent = createAgent({
      model,
      tools: [probe],
      systemPrompt: SYSTEM,
      checkpointer: new MemorySaver(),
      middleware: [compactionMiddleware(manager)],
    });
    const config = { configurable: { thread_id: 'thread-7' }, recursionLimit: 500 };
    await agent.invoke({ messages: [{ role: 'user', content: PROMPT }] }, config);
    const second = await agent.invoke(
      { messages: [{ role: 'user', content: 'Probe them all again.' }] },
      config,
    );
    expect(second.messages).toHaveLength(2 * (2 + 2 * STEPS));
    expect(server!.requests).toHaveLength(2 * (STEPS + 1));
    expect(requestViolations(server!, manager)).toEqual([]);
    // One rolling summary for the thread, resumed by the second run: its version only grows.
    const summarized = events.filter((event) => event.name === 'compact.summary_created');
    expect(summarized.length).toBeGreaterThan(0);
    expect(summarized.every((event) => event.sessionId === 'thread-7')).toBe(true);
    const versions = server!.requests.map((request) =>
      Number(/<COMPACT-SUMMARY v(\d+)/.exec(request.rawBody)?.[1] ?? 0),
    );
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(versions[STEPS + 1]).toBeGreaterThan(0);
  });
});

describe('LangChain createAgent: overflow recovery', () => {
  /** The provider's real window, in its own (reported) tokens, while the manager was told 8,000. */
  const LIMIT = 4000;
  const tooLong = (tokens: number) => contextLengthExceeded(LIMIT, tokens);

  it('compacts against the reported limit and retries once per rejection', async () => {
    const { manager, events } = newManager();
    const model = await start((request) =>
      reportedInput(request) > LIMIT ? tooLong(reportedInput(request)) : undefined,
    );
    const result = await agentWith(model, manager, 'lc-recover').invoke(
      { messages: [{ role: 'user', content: PROMPT }] },
      { recursionLimit: 500 },
    );
    expect(result.messages).toHaveLength(1 + 2 * STEPS + 1);
    const requests = server!.requests;
    const rejected = requests.filter((request) => reportedInput(request) > LIMIT);
    expect(rejected.length).toBeGreaterThan(0);
    expect(requests).toHaveLength(STEPS + 1 + rejected.length);
    const recoveries = events.filter((event) => event.name === 'compact.overflow_recovery');
    expect(recoveries).toHaveLength(rejected.length);
    expect(recoveries[0]?.properties).toMatchObject({ integration: 'langchain', reportedLimit: LIMIT });
    // Each rejection is followed by one retry the provider accepts, system prompt and pairs intact.
    for (const request of rejected) {
      const retry = requests[request.seq]!;
      expect(reportedInput(retry)).toBeLessThanOrEqual(LIMIT);
      expect(readRequest(retry).entries[0]).toMatchObject({ kind: 'system', text: SYSTEM });
      expect(positionalPairProblems(retry)).toEqual([]);
    }
    // The summary travels as a user turn (a HumanMessage), right after the system prompt.
    const summarized = readRequest(requests.at(-1)!).entries;
    expect(summarized.find((entry) => entry.text.includes('<COMPACT-SUMMARY v'))?.kind).toBe('user');
  });

  it('retries only once: a second rejection reaches the caller', async () => {
    const { manager } = newManager();
    const model = await start((request) => tooLong(reportedInput(request)));
    const run = agentWith(model, manager, 'lc-twice').invoke({
      messages: [{ role: 'user', content: PROMPT }],
    });
    await expect(run).rejects.toThrow(/maximum context length/);
    expect(server!.requests).toHaveLength(2);
  });

  it('surfaces any other error unchanged', async () => {
    const { manager, events } = newManager();
    const model = await start(() => ({
      error: { status: 400, message: 'Invalid schema for function probe' },
    }));
    const run = agentWith(model, manager, 'lc-bad').invoke({ messages: [{ role: 'user', content: PROMPT }] });
    await expect(run).rejects.toThrow('Invalid schema for function probe');
    expect(server!.requests).toHaveLength(1);
    expect(events.some((event) => event.name === 'compact.overflow_recovery')).toBe(false);
  });
});

describe('LangChain session ids', () => {
  it('reads the checkpointer thread id by default and a function of the request', async () => {
    const { manager, events } = newManager();
    const model = await start(() => ({ text: 'hello' }));
    const seen: string[] = [];
    const byThread = createAgent({ model, tools: [], middleware: [compactionMiddleware(manager)] });
    await byThread.invoke(
      { messages: [{ role: 'user', content: 'hi' }] },
      { configurable: { thread_id: 't-1' } },
    );
    const byFunction = createAgent({
      model,
      tools: [],
      middleware: [
        compactionMiddleware(manager, {
          sessionId: (request) => `user-${request.messages.length}`,
          onCompaction: (_result, id) => seen.push(id),
        }),
      ],
    });
    await byFunction.invoke({ messages: [{ role: 'user', content: 'hi' }] });
    expect(seen).toEqual(['user-1']);
    expect(events.some((event) => event.sessionId === 't-1')).toBe(true);
  });

  it('fails without a session id rather than sharing one', async () => {
    const { manager } = newManager();
    const model = await start(() => ({ text: 'hello' }));
    const agent = createAgent({ model, tools: [], middleware: [compactionMiddleware(manager)] });
    const run = agent.invoke({ messages: [{ role: 'user', content: 'hi' }] });
    await expect(run).rejects.toSatisfy((error: unknown) => {
      const cause = (error as { cause?: unknown }).cause;
      return isCompactError(error, 'invalid_config') || isCompactError(cause, 'invalid_config');
    });
    expect(server!.requests).toHaveLength(0);
  });
});
