import {
  Agent,
  type AgentInputItem,
  type CustomSpanData,
  MemorySession,
  OpenAIProvider,
  Runner,
  type Span,
  setTraceProcessors,
  setTracingDisabled,
  type Trace,
  type TracingProcessor,
  tool,
} from '@openai/agents';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import {
  isSummarizationRequest,
  readRequest,
  requestTokens,
  toolLoopHandler,
  toolPairProblems,
} from '../../testing/agent-model-script.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { agentToolSchemas, boundaryAwareTail, CompactionSession, compactionInputFilter } from './index.js';

const INSTRUCTIONS = 'You are a coding assistant. Read files before answering.';

function fileBody(n: number): string {
  return Array.from(
    { length: 40 },
    (_, line) => `// file ${n} line ${line}: export const value${line} = compute(${line}, "${n}");`,
  ).join('\n');
}

const readFile = tool({
  name: 'read_file',
  description: 'Read a file of the repository',
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => fileBody(Number(path.replace(/\D/g, '')) || 0),
});

function newManager(): { manager: CompactManager; events: AnyCompactEvent[] } {
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 6000,
    policy: {
      triggerPct: 0.6,
      hardCapBuffer: 600,
      keepRecentTurns: 2,
      keepToolIoPairs: 1,
      maxSummaryTokens: 300,
      // Deep enough that clearing old tool output alone never suffices: these tests follow
      // the summary through the SDK.
      targetPct: 0.3,
    },
  });
  const events: AnyCompactEvent[] = [];
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  return { manager, events };
}

let server: ProviderTestServer;
let provider: OpenAIProvider;

beforeEach(async () => {
  server = await startProviderTestServer({
    handler: toolLoopHandler({ tool: 'read_file', argumentsFor: (n) => ({ path: `src/file-${n}.ts` }) }),
  });
  provider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.openaiBaseURL });
  setTracingDisabled(true);
});

afterEach(async () => {
  await server.close();
});

function agentRequests() {
  return server.requests.map(readRequest).filter((view) => !isSummarizationRequest(view));
}

function expectEveryRequestSound(manager: CompactManager) {
  const views = agentRequests();
  expect(views.length).toBeGreaterThan(0);
  for (const view of views) {
    expect(toolPairProblems(view), JSON.stringify(view.entries.map((e) => e.kind))).toEqual([]);
    expect(requestTokens(manager, view)).toBeLessThanOrEqual(manager.budget);
  }
}

const agent = new Agent({ name: 'coder', instructions: INSTRUCTIONS, tools: [readFile], model: 'gpt-4o' });

describe('compactionInputFilter with the real Runner', () => {
  it('compacts every model call over several turns with tools, keeping pairs and the budget', async () => {
    const { manager, events } = newManager();
    const runner = new Runner({ modelProvider: provider });
    const session = new MemorySession();
    const filter = compactionInputFilter(manager, { sessionId: 'chat-1' });
    for (let turn = 0; turn < 8; turn++) {
      const result = await runner.run(agent, `Explain file ${turn}`, {
        session,
        callModelInputFilter: filter,
      });
      expect(String(result.finalOutput)).toContain('Done:');
    }

    const summaries = events.filter((event) => event.name === 'compact.summary_created');
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    expect(events.every((event) => event.sessionId === 'chat-1')).toBe(true);
    expectEveryRequestSound(manager);
    const last = agentRequests().at(-1)!;
    expect(last.entries.some((entry) => entry.text.includes('<COMPACT-SUMMARY v'))).toBe(true);
    expect(last.system).toBe(INSTRUCTIONS);

    // The session keeps the raw history: every turn, no summary.
    const raw = await session.getItems();
    expect(raw.filter((item) => (item as { role?: string }).role === 'user')).toHaveLength(8);
    expect(JSON.stringify(raw)).not.toContain('COMPACT-SUMMARY');
    const rawTokens = manager.estimate(raw, { system: INSTRUCTIONS, tools: agentToolSchemas(agent) }).total;
    expect(rawTokens).toBeGreaterThan(manager.budget);
  });

  it('counts the agent tools and defaults the session id to context.sessionId, with no shared fallback', async () => {
    const { manager, events } = newManager();
    const filter = compactionInputFilter<{ sessionId: string } | undefined>(manager);
    const typedAgent = agent as unknown as Parameters<typeof filter>[0]['agent'];
    const input: AgentInputItem[] = [{ role: 'user', content: 'hi' }];
    const out = await filter({
      modelData: { input, instructions: 'x' },
      agent: typedAgent,
      context: { sessionId: 'ctx-7' },
    });
    expect(out.input[0]).toBe(input[0]);
    expect(filter.preserveInputIdentity).toBe(true);
    await expect(filter({ modelData: { input }, agent: typedAgent, context: undefined })).rejects.toThrow(
      /no session id/,
    );
    const estimates = events.filter((event) => event.name === 'compact.token_estimate');
    expect(estimates.map((event) => event.sessionId)).toEqual(['ctx-7']);
    const withTools = estimates[0]!.properties as { breakdown: { toolsSchema: number } };
    expect(withTools.breakdown.toolsSchema).toBeGreaterThan(0);
    expect(agentToolSchemas(agent)).toBe(agentToolSchemas(agent));
  });
});

describe('CompactionSession with the real Runner', () => {
  it('compacts through runCompaction and getItems, leaving the raw history intact', async () => {
    const { manager, events } = newManager();
    const underlying = new MemorySession({ sessionId: 'conv-9' });
    const session = new CompactionSession({
      session: underlying,
      manager,
      instructions: INSTRUCTIONS,
      tools: agentToolSchemas(agent),
    });
    let hookCalls = 0;
    const hook = session.runCompaction.bind(session);
    session.runCompaction = async (args) => {
      hookCalls++;
      return hook(args);
    };
    const runner = new Runner({ modelProvider: provider });
    for (let turn = 0; turn < 8; turn++) {
      await runner.run(agent, `Explain file ${turn}`, { session });
    }
    expect(hookCalls).toBe(8);
    expect(events.some((event) => event.name === 'compact.summary_created')).toBe(true);
    expect(events.every((event) => event.sessionId === 'conv-9')).toBe(true);
    expectEveryRequestSound(manager);

    const raw = await session.getRawItems();
    expect(raw.filter((item) => (item as { role?: string }).role === 'user')).toHaveLength(8);
    expect(JSON.stringify(raw)).not.toContain('COMPACT-SUMMARY');
    const view = await session.getItems();
    expect(view.length).toBeLessThan(raw.length);
    expect(JSON.stringify(view)).toContain('<COMPACT-SUMMARY v');
    expect(session.lastResult?.version).toBeGreaterThanOrEqual(1);

    // limit is boundary-aware: never a result without its call.
    for (let limit = 1; limit <= view.length; limit++) {
      const tail = await session.getItems(limit);
      expect(tail.length).toBeLessThanOrEqual(limit);
      const calls = new Set(
        tail.flatMap((item) =>
          (item as { type?: string }).type === 'function_call' ? [(item as { callId: string }).callId] : [],
        ),
      );
      for (const item of tail) {
        if ((item as { type?: string }).type === 'function_call_result') {
          expect(calls.has((item as { callId: string }).callId)).toBe(true);
        }
      }
    }

    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await manager.state('conv-9')).toBeUndefined();
  });

  it('rewrites the underlying history only with writeTimeCompaction', async () => {
    const { manager } = newManager();
    const underlying = new MemorySession();
    const session = new CompactionSession({ session: underlying, manager, writeTimeCompaction: true });
    const runner = new Runner({ modelProvider: provider });
    for (let turn = 0; turn < 8; turn++) {
      await runner.run(agent, `Explain file ${turn}`, {
        session,
        callModelInputFilter: session.inputFilter(),
      });
    }
    const stored = await underlying.getItems();
    expect(JSON.stringify(stored)).toContain('<COMPACT-SUMMARY v');
    // The user's own messages are kept verbatim (issue 20: user text ranked first); what is
    // folded is the assistant's and the tools' output.
    expect(stored.filter((item) => (item as { role?: string }).role === 'user').length).toBeLessThanOrEqual(
      8,
    );
    expect(JSON.stringify(stored)).toContain('Explain file 0');
    expectEveryRequestSound(manager);
    // Storage stays bounded: the stored history is the compacted view.
    expect(manager.estimate(stored).total).toBeLessThan(manager.budget);
  });

  it('puts the raw history back when a write-time rewrite fails', async () => {
    const { manager } = newManager();
    const underlying = new MemorySession();
    const session = new CompactionSession({
      session: underlying,
      manager,
      sessionId: 'fragile',
      writeTimeCompaction: true,
    });
    const items: AgentInputItem[] = [];
    for (let i = 0; i < 6; i++) {
      items.push({ role: 'user', content: `question ${i} ${'detail '.repeat(30)}` });
      items.push({
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: `answer ${i}` }],
      });
    }
    await underlying.addItems(items);
    const original = underlying.addItems.bind(underlying);
    let failures = 1;
    underlying.addItems = async (added) => {
      if (failures-- > 0) throw new Error('disk full');
      return original(added);
    };
    await expect(session.runCompaction({ force: true })).rejects.toThrow('disk full');
    expect(await underlying.getItems()).toEqual(items);
  });

  it('returns null from runCompaction below the trigger and compacts on force', async () => {
    const { manager } = newManager();
    const session = new CompactionSession({ session: new MemorySession(), manager, sessionId: 'forced' });
    expect(await session.runCompaction()).toBeNull();
    await session.addItems([
      { role: 'user', content: 'first question' },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'first answer' }] },
      { role: 'user', content: 'second question' },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'second answer' }] },
      { role: 'user', content: 'third question' },
    ]);
    expect(await session.runCompaction()).toBeNull();
    expect(session.lastResult?.applied).toBe(false);
    expect(await session.runCompaction({ force: true })).toBeNull(); // embedded summarizer: no model usage
    expect(session.lastResult?.applied).toBe(true);
    expect(await session.getSessionId()).toBeTypeOf('string');
    expect(await session.popItem()).toMatchObject({ content: 'third question' });
    expect(() => new CompactionSession({ session: {} as MemorySession, manager })).toThrow(
      'Agents SDK Session',
    );
    expect(
      () => new CompactionSession({ session: new MemorySession(), manager: {} as CompactManager }),
    ).toThrow('CompactManager');
  });

  it('reports the summarizer model usage to the run', async () => {
    const { manager: base } = newManager();
    const manager = new CompactManager({
      model: base.model,
      maxContextTokens: base.maxContextTokens,
      policy: base.policy,
      summarizer: {
        name: 'fake-llm',
        summarize: async () => ({
          text: 'Goals: done.',
          model: 'fake',
          usage: { inputTokens: 120, outputTokens: 30 },
        }),
      },
    });
    const session = new CompactionSession({ session: new MemorySession(), manager });
    await session.addItems(
      ['one', 'two', 'three', 'four'].flatMap((word): AgentInputItem[] => [
        { role: 'user', content: `question ${word}` },
        {
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: `answer ${word}` }],
        },
      ]),
    );
    const result = await session.runCompaction({ force: true });
    expect(result?.usage).toMatchObject({ inputTokens: 120, outputTokens: 30, totalTokens: 150 });
  });
});

describe('boundaryAwareTail', () => {
  const items = [
    { role: 'user', content: 'q' },
    { type: 'reasoning', id: 'rs_1', content: [] },
    { type: 'function_call', callId: 'a', name: 't', arguments: '{}' },
    { type: 'function_call', callId: 'b', name: 't', arguments: '{}' },
    { type: 'function_call_result', callId: 'a', name: 't', status: 'completed', output: 'A' },
    { type: 'function_call_result', callId: 'b', name: 't', status: 'completed', output: 'B' },
    { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] },
  ] as AgentInputItem[];

  it('drops results whose call fell outside the window', () => {
    expect(boundaryAwareTail(items, 3)).toEqual([items[6]]);
    // Calls whose reasoning item fell outside go too (review 80), with their results.
    expect(boundaryAwareTail(items, 4)).toEqual([items[6]]);
    expect(boundaryAwareTail(items, 5)).toEqual([items[6]]);
    expect(boundaryAwareTail(items, 6)).toEqual(items.slice(1));
    expect(boundaryAwareTail(items)).toEqual(items);
    expect(boundaryAwareTail(items, 0)).toEqual([]);
  });

  it('drops an assistant message item whose reasoning item fell outside the window', () => {
    // The Responses API refuses it: "Item 'msg_1' of type 'message' was provided without its
    // required 'reasoning' item: 'rs_1'". A message without an id belongs to no reasoning item.
    const text = (t: string) => [{ type: 'output_text', text: t }];
    const rounds = [
      { role: 'user', content: 'q1' },
      { type: 'reasoning', id: 'rs_1', content: [] },
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: text('one') },
      { role: 'user', content: 'q2' },
      { type: 'reasoning', id: 'rs_2', content: [] },
      { type: 'function_call', callId: 'c', name: 't', arguments: '{}' },
      { type: 'message', id: 'msg_2', role: 'assistant', status: 'completed', content: text('two') },
      { type: 'function_call_result', callId: 'c', name: 't', status: 'completed', output: 'C' },
      { role: 'assistant', status: 'completed', content: text('no id') },
    ] as AgentInputItem[];
    expect(boundaryAwareTail(rounds, 7)).toEqual(rounds.slice(3));
    expect(boundaryAwareTail(rounds, 4)).toEqual([rounds[8]]);
    expect(boundaryAwareTail(rounds, 3)).toEqual([rounds[8]]);
    expect(boundaryAwareTail(rounds, 1)).toEqual([rounds[8]]);
    expect(boundaryAwareTail(rounds, 6)).toEqual(rounds.slice(3));
  });
});

describe('tracing', () => {
  it('nests the agent.compaction span under the run trace and tags the events with its ids', async () => {
    const spans: Span<CustomSpanData>[] = [];
    const traces: Trace[] = [];
    const collector: TracingProcessor = {
      onTraceStart: async (trace) => void traces.push(trace),
      onTraceEnd: async () => {},
      onSpanStart: async () => {},
      onSpanEnd: async (span) => {
        if (span.spanData.type === 'custom') spans.push(span as Span<CustomSpanData>);
      },
      shutdown: async () => {},
      forceFlush: async () => {},
    };
    setTraceProcessors([collector]);
    setTracingDisabled(false);
    try {
      const { manager, events } = newManager();
      const runner = new Runner({ modelProvider: provider, tracingDisabled: false });
      const session = new MemorySession();
      const filter = compactionInputFilter(manager, { sessionId: 'traced' });
      for (let turn = 0; turn < 6; turn++) {
        await runner.run(agent, `Explain file ${turn}`, { session, callModelInputFilter: filter });
      }
      const compactionSpans = spans.filter(
        (span) => span.spanData.type === 'custom' && span.spanData.name === 'agent.compaction',
      );
      expect(compactionSpans.length).toBeGreaterThan(0);
      const traceIds = new Set(traces.map((trace) => trace.traceId));
      for (const span of compactionSpans) {
        expect(traceIds.has(span.traceId)).toBe(true);
        expect(span.parentId).not.toBeNull();
      }
      const applied = compactionSpans.find((span) => span.spanData.data['compaction.applied'] === true);
      expect(applied?.spanData.data).toMatchObject({ 'compaction.session_id': 'traced' });
      expect(applied?.spanData.data['compaction.tokens_after'] as number).toBeLessThan(
        applied?.spanData.data['compaction.tokens_before'] as number,
      );
      const summaryEvent = events.find((event) => event.name === 'compact.pruned_messages')!;
      expect(traceIds.has(summaryEvent.traceId)).toBe(true);
      expect(compactionSpans.map((span) => span.spanId)).toContain(
        events.find(
          (event) =>
            event.name === 'compact.token_estimate' && event.operationId === summaryEvent.operationId,
        )?.parentId,
      );
    } finally {
      setTracingDisabled(true);
      setTraceProcessors([]);
    }
  });
});
