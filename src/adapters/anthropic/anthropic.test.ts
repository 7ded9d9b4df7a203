import Anthropic from '@anthropic-ai/sdk';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../core/compact-manager.js';
import {
  readRequest,
  requestTokens,
  toolLoopHandler,
  toolPairProblems,
} from '../../testing/agent-model-script.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import {
  compactThreadHistory,
  DEFAULT_ANTHROPIC_MAX_CONTEXT_TOKENS,
  type HistoryMessage,
  resolveMaxContextTokens,
  shouldTriggerCompaction,
  withCompaction,
} from './index.js';

/** A large thread: 50 messages, long ones, with facts the summary must keep. */
function largeThread(): HistoryMessage[] {
  return Array.from(
    { length: 50 },
    (_, k): HistoryMessage => ({
      role: k % 2 === 0 ? 'user' : 'assistant',
      content: `${k % 2 === 0 ? 'Question' : 'Answer'} ${k}: ticket ORION-${1000 + k} ${'details about the deployment pipeline '.repeat(30)}`,
    }),
  );
}

const SUMMARY =
  'Preferences: concise.\nFacts & Decisions: ORION-1000 tracked.\nOpen Items: none\nKey Context: none';

let server: ProviderTestServer;
let anthropic: Anthropic;

afterEach(async () => {
  await server?.close();
});

async function start(handler: Parameters<typeof startProviderTestServer>[0]) {
  server = await startProviderTestServer(handler);
  anthropic = new Anthropic({ apiKey: 'test-key', baseURL: server.anthropicBaseURL, maxRetries: 0 });
}

const base = {
  systemPrompt: 'You are Orion, a Slack assistant.',
  userMessage: 'What is the status?',
  model: 'claude-test-model',
  maxSummaryTokens: 512,
  keepLastN: 6,
  traceId: 'trace-123',
  maxContextTokens: 8000,
  env: {},
};

describe('compactThreadHistory', () => {
  it('summarizes the oldest messages and keeps the last N verbatim', async () => {
    await start({ handler: [{ text: SUMMARY }] });
    const threadHistory = largeThread();
    const result = await compactThreadHistory({ ...base, threadHistory, anthropic });
    expect(result.compactionApplied).toBe(true);
    expect(result.summary).toBe(SUMMARY);
    expect(result.compactedHistory).toHaveLength(7);
    expect(result.compactedHistory[0]).toEqual({
      role: 'user',
      content: expect.stringContaining('<COMPACT-SUMMARY v1>'),
    });
    expect(result.compactedHistory.slice(1)).toEqual(threadHistory.slice(-6));
    expect(result.compactedEstimatedTokens).toBeLessThan(result.originalEstimatedTokens);
    expect(result.originalEstimatedTokens).toBeGreaterThan(0.8 * 8000);

    const [request] = server.requests;
    expect(server.requests).toHaveLength(1);
    const body = request!.body as {
      model: string;
      max_tokens: number;
      system: string;
      messages: { content: string }[];
    };
    expect(body.model).toBe('claude-test-model');
    expect(body.max_tokens).toBe(512);
    expect(body.system).toContain('Facts & Decisions');
    expect(body.messages[0]!.content).toContain('ORION-1000');
    expect(body.messages[0]!.content).not.toContain('ORION-1049'); // the kept tail is not summarized
  });

  it('does nothing below the threshold', async () => {
    await start({});
    const threadHistory = largeThread().slice(0, 4);
    const result = await compactThreadHistory({ ...base, threadHistory, anthropic });
    expect(result).toMatchObject({ compactionApplied: false, reason: 'below_threshold', summary: '' });
    expect(result.compactedHistory).toEqual(threadHistory);
    expect(server.requests).toHaveLength(0);
  });

  it('returns the original history when the summary call fails', async () => {
    await start({ handler: [{ error: { status: 500, message: 'overloaded' } }] });
    const threadHistory = largeThread();
    const result = await compactThreadHistory({ ...base, threadHistory, anthropic });
    expect(result).toMatchObject({ compactionApplied: false, reason: 'summarizer_failed' });
    expect(result.error?.message).toMatch(/500/);
    expect(result.compactedHistory).toEqual(threadHistory);
    expect(result.compactedEstimatedTokens).toBe(result.originalEstimatedTokens);
  });

  it('returns the original history on a refusal and on a timeout (COMPACTION_TIMEOUT_MS)', async () => {
    await start({ handler: [{ refusal: 'no' }, { hang: true }] });
    const threadHistory = largeThread();
    expect(await compactThreadHistory({ ...base, threadHistory, anthropic })).toMatchObject({
      compactionApplied: false,
      reason: 'summarizer_refused',
    });
    const timedOut = await compactThreadHistory({
      ...base,
      threadHistory,
      anthropic,
      env: { COMPACTION_TIMEOUT_MS: '150' },
    });
    expect(timedOut).toMatchObject({ compactionApplied: false, reason: 'timeout' });
    expect(timedOut.compactedHistory).toEqual(threadHistory);
  });

  it('keeps tool_use with its tool_result and merges an earlier summary', async () => {
    await start({ handler: [{ text: 'Facts & Decisions: merged.' }] });
    const threadHistory: HistoryMessage[] = [
      { role: 'user', content: '<COMPACT-SUMMARY v2>\nFacts & Decisions: old.\n</COMPACT-SUMMARY>' },
      ...largeThread().slice(0, 20),
      { role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'lookup', input: { q: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'result' }] },
      { role: 'assistant', content: 'Found it.' },
    ];
    const result = await compactThreadHistory({
      ...base,
      threadHistory,
      anthropic,
      keepLastN: 2,
      force: true,
    });
    expect(result.compactionApplied).toBe(true);
    expect(result.reason).toBe('forced');
    expect(result.compactedHistory[0]!.content).toContain('<COMPACT-SUMMARY v3>');
    expect(result.compactedHistory.slice(1)).toEqual(threadHistory.slice(-3));
    const prompt = (server.requests[0]!.body as { messages: { content: string }[] }).messages[0]!.content;
    expect(prompt).toContain('<previous_summary>\nFacts & Decisions: old.');
  });

  it('records an agent.compaction span with the spec metadata', async () => {
    await start({ handler: [{ text: `${SUMMARY}\napi_key=sk-secret-value-1234567890` }] });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    await compactThreadHistory({
      ...base,
      threadHistory: largeThread(),
      anthropic,
      tracer: provider.getTracer('test'),
    });
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('agent.compaction');
    expect(span?.attributes).toMatchObject({
      'gen_ai.conversation.id': 'trace-123',
      'langfuse.observation.metadata.traceId': 'trace-123',
      'langfuse.observation.metadata.historyMessages': '50',
      'langfuse.observation.metadata.keepLastN': '6',
      'langfuse.observation.metadata.compactionApplied': 'true',
      'compaction.historyMessages': 50,
    });
    expect(span?.attributes['compaction.compactedEstimatedTokens']).toBeTypeOf('number');
    expect(String(span?.attributes['langfuse.observation.output'])).not.toContain('sk-secret');
  });

  it('resolves the context window without model names', () => {
    expect(resolveMaxContextTokens(undefined, {})).toBe(DEFAULT_ANTHROPIC_MAX_CONTEXT_TOKENS);
    expect(resolveMaxContextTokens(undefined, { ANTHROPIC_MAX_CONTEXT_TOKENS: '200000' })).toBe(200_000);
    expect(resolveMaxContextTokens(undefined, { ANTHROPIC_MAX_CONTEXT_TOKENS: 'lots' })).toBe(100_000);
    expect(resolveMaxContextTokens(50_000, { ANTHROPIC_MAX_CONTEXT_TOKENS: '200000' })).toBe(50_000);
    expect(shouldTriggerCompaction({ estimatedTokens: 80, maxContextTokens: 100, threshold: 0.8 })).toBe(
      true,
    );
    expect(shouldTriggerCompaction({ estimatedTokens: 79, maxContextTokens: 100, threshold: 0.8 })).toBe(
      false,
    );
  });
});

describe('withCompaction', () => {
  beforeEach(async () => {
    await start({ handler: toolLoopHandler({ tool: 'lookup', callsPerTurn: 3 }) });
  });

  it('compacts every messages.create of a tool loop through the real SDK client', async () => {
    const manager = new CompactManager({
      model: 'claude-test-model',
      maxContextTokens: 5000,
      policy: {
        triggerPct: 0.6,
        hardCapBuffer: 500,
        keepRecentTurns: 2,
        keepToolIoPairs: 2,
        maxSummaryTokens: 300,
      },
    });
    const checks: boolean[] = [];
    const client = withCompaction(anthropic, manager, {
      sessionId: 'thread-1',
      onCompaction: (result) => checks.push(result.applied),
    });
    expect(client.baseURL).toBe(anthropic.baseURL);
    const tools = [
      {
        name: 'lookup',
        description: 'Look up',
        input_schema: { type: 'object' as const, properties: { q: { type: 'string' } } },
      },
    ];
    const messages: Anthropic.MessageParam[] = [];
    for (let turn = 0; turn < 6; turn++) {
      messages.push({ role: 'user', content: `Investigate incident ${turn}` });
      for (;;) {
        const reply = await client.messages.create({
          model: 'claude-test-model',
          max_tokens: 256,
          system: 'Be brief.',
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
            content: `log line for ${use.id}: ${'trace data '.repeat(120)}`,
          })),
        });
      }
    }
    expect(checks).toContain(true);
    for (const request of server.requests) {
      const view = readRequest(request);
      expect(toolPairProblems(view)).toEqual([]);
      expect(requestTokens(manager, view)).toBeLessThanOrEqual(manager.budget);
      expect(view.system).toBe('Be brief.');
    }
    expect(JSON.stringify(server.requests.at(-1)!.body)).toContain('<COMPACT-SUMMARY v');
    expect(manager.estimate(messages, { system: 'Be brief.', tools }).total).toBeGreaterThan(manager.budget);
  });

  it('requires a session id (no shared default) and rejects a non-client', async () => {
    const manager = new CompactManager({ model: 'claude-test-model', maxContextTokens: 5000 });
    const ids: string[] = [];
    const client = withCompaction(anthropic, manager, {
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
    expect(() => withCompaction(anthropic, manager, {} as never)).toThrow(/sessionId/);
    expect(() => withCompaction({} as Anthropic, manager, { sessionId: 's' })).toThrow('Anthropic client');
  });
});
