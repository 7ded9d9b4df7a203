import { LangfuseSpanProcessor } from '@langfuse/otel';
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../test/support/until.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import type { Summarizer } from '../../core/summary/summarizer.js';
import { describeExporterConformance } from '../../testing/exporter-conformance.js';
import {
  type OtlpTestServer,
  type ReceivedSpan,
  startOtlpTestServer,
} from '../../testing/otlp-test-server.js';
import { sampleCompactionEvents } from '../../testing/sample-events.js';
import { compactionAttributes } from './compaction-attributes.js';
import { instrumentManager } from './instrument-manager.js';
import { otelExporter } from './otel-exporter.js';
import { otlpExporter } from './otlp-exporter.js';

const SUMMARY = 'Goal: migrate billing to schema v2. Done: wrote the migration. Next: backfill invoices.';

/** A summarizer that reports a model call, as the OpenAI/Anthropic ones do. */
function modelSummarizer(fail = false): Summarizer {
  return {
    name: 'test-llm',
    async summarize() {
      if (fail) throw new Error('upstream 503');
      return { text: SUMMARY, model: 'gpt-4o-mini', usage: { inputTokens: 1834, outputTokens: 57 } };
    },
  };
}

function history(turns: number) {
  const messages: { role: string; content: string }[] = [
    { role: 'system', content: 'You are a billing agent.' },
  ];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({
      role: 'user',
      content: `Step ${turn}: ${'please migrate the invoices table and check totals. '.repeat(8)}`,
    });
    messages.push({
      role: 'assistant',
      content: `Done with step ${turn}. ${'I checked every row and the totals match. '.repeat(8)}`,
    });
  }
  return messages;
}

function newManager(summarizer: Summarizer) {
  return new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 4000,
    policy: {
      triggerPct: 0.4,
      hardCapBuffer: 300,
      keepRecentTurns: 2,
      keepToolIoPairs: 1,
      maxSummaryTokens: 300,
    },
    summarizer,
  });
}

let contextManager: AsyncLocalStorageContextManager;
beforeAll(() => {
  contextManager = new AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
});
afterAll(() => {
  api.context.disable();
});

let receiver: OtlpTestServer | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const span = spans.find((candidate) => candidate.name === name);
  if (!span) throw new Error(`no ${name} span among ${spans.map((s) => s.name).join(', ')}`);
  return span;
}

describe('instrumentManager with the real OTLPTraceExporter (JSON) on 127.0.0.1', () => {
  it("nests agent.compaction under the caller's active span, with a chat child and the figures", async () => {
    receiver = await startOtlpTestServer();
    const provider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
    });
    const tracer = provider.getTracer('agent-app');
    const manager = newManager(modelSummarizer());
    const uninstrument = instrumentManager(manager, { tracer });
    const sent = await tracer.startActiveSpan('agent.turn', async (turn) => {
      try {
        return await manager.preflight('billing-session', history(12));
      } finally {
        turn.end();
      }
    });
    expect(sent.length).toBeLessThan(history(12).length);
    await provider.forceFlush();
    const spans = receiver.spans;
    const turn = byName(spans, 'agent.turn');
    const compaction = byName(spans, 'agent.compaction');
    const chat = byName(spans, 'chat');
    expect(compaction.traceId).toBe(turn.traceId);
    expect(compaction.parentSpanId).toBe(turn.spanId);
    expect(chat.parentSpanId).toBe(compaction.spanId);
    expect(chat.traceId).toBe(turn.traceId);
    expect(compaction.endMs).toBeGreaterThanOrEqual(chat.endMs);
    expect(compaction.attributes).toMatchObject({
      'gen_ai.conversation.id': 'billing-session',
      'compaction.applied': true,
      'compaction.strategy': 'task_state',
      'compaction.summarizer': 'test-llm',
      'compaction.model': 'gpt-4o',
      'langfuse.observation.output': expect.stringContaining('backfill invoices'),
      'langfuse.observation.metadata.traceId': 'billing-session',
      'langfuse.observation.metadata.keepLastN': '2',
      'langfuse.observation.metadata.compactionApplied': 'true',
      'langfuse.observation.metadata.historyMessages': '25',
    });
    const before = compaction.attributes['compaction.tokens_before'] as number;
    const after = compaction.attributes['compaction.tokens_after'] as number;
    expect(before).toBeGreaterThan(1600);
    expect(after).toBeLessThan(before);
    expect(compaction.attributes['langfuse.observation.metadata.originalEstimatedTokens']).toBe(
      String(before),
    );
    expect(compaction.attributes['langfuse.observation.metadata.compactedEstimatedTokens']).toBe(
      String(after),
    );
    expect(compaction.attributes['compaction.usage_pct']).toBeCloseTo(before / 4000, 5);
    expect(compaction.attributes['compaction.pruned']).toBeGreaterThan(0);
    expect(compaction.attributes['compaction.summary_tokens']).toBeGreaterThan(0);
    // At least the policy's two recent turns; more when the target holds them (issue 20).
    expect(compaction.attributes['compaction.kept.recent_turns']).toBeGreaterThanOrEqual(2);
    expect(compaction.status?.code ?? 0).toBe(0);
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': 1834,
      'gen_ai.usage.output_tokens': 57,
    });
    // One span per top-level call even though preflight calls compact inside.
    expect(spans.filter((span) => span.name === 'agent.compaction')).toHaveLength(1);
    uninstrument();
    await manager.preflight('billing-session', history(12));
    await provider.forceFlush();
    expect(receiver.spans.filter((span) => span.name === 'agent.compaction')).toHaveLength(1);
    await provider.shutdown();
  });

  it('sets an ERROR status and records the exception when the summarizer fails (and falls back)', async () => {
    receiver = await startOtlpTestServer();
    const provider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
    });
    const tracer = provider.getTracer('agent-app');
    const manager = newManager(modelSummarizer(true));
    instrumentManager(manager, { tracer });
    await tracer.startActiveSpan('agent.turn', async (turn) => {
      await manager.manualCompact('failing-session', history(6), { note: 'before deploy' });
      turn.end();
    });
    await provider.forceFlush();
    const compaction = byName(receiver.spans, 'agent.compaction');
    expect(compaction.parentSpanId).toBe(byName(receiver.spans, 'agent.turn').spanId);
    expect(compaction.status?.code).toBe(api.SpanStatusCode.ERROR);
    expect(compaction.status?.message).toContain('upstream 503');
    expect(compaction.events.some((event) => event.name === 'exception')).toBe(true);
    expect(compaction.attributes).toMatchObject({
      'compaction.manual': true,
      'compaction.note': 'before deploy',
    });
    await provider.shutdown();
  });

  it('records a thrown error on the span and rethrows it', async () => {
    receiver = await startOtlpTestServer();
    const provider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
    });
    const manager = newManager(modelSummarizer());
    instrumentManager(manager, { tracer: provider.getTracer('t') });
    await expect(manager.compact('', [])).rejects.toThrow(/sessionId/);
    await provider.forceFlush();
    const compaction = byName(receiver.spans, 'agent.compaction');
    expect(compaction.status?.code).toBe(api.SpanStatusCode.ERROR);
    await provider.shutdown();
  });
});

describe('instrumentManager: a thrown error leaves the process as safe as the events', () => {
  it('records the exception and status redacted, the session id hashed, and no stack', async () => {
    receiver = await startOtlpTestServer();
    const provider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
    });
    const secret = 'sk-proj-Zx81kQv3LmN7pR2tY6wE9uI0oPa';
    const sessionId = 'alice@example.com-thread-7';
    // A storage whose error quotes a secret and the archive path (the session id in it).
    const broken = async () => {
      throw new Error(`EACCES: open /archive/${sessionId}/t.jsonl (token=${secret})`);
    };
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 4000,
      requireArchive: true,
      storage: { name: 'broken', saveTranscript: broken, saveSummary: broken, saveEvent: async () => {} },
    });
    instrumentManager(manager, { tracer: provider.getTracer('t'), hashSessionIds: true, hashKey: 'k' });
    await expect(manager.compact(sessionId, history(12), { force: true })).rejects.toThrow(secret);
    await provider.forceFlush();
    const compaction = byName(receiver.spans, 'agent.compaction');
    expect(compaction.status?.code).toBe(api.SpanStatusCode.ERROR);
    expect(compaction.status?.message).toContain('EACCES');
    const sent = JSON.stringify(compaction);
    expect(sent).toContain('exception.message');
    expect(sent).not.toContain(secret);
    expect(sent).not.toContain(sessionId);
    expect(sent).not.toContain('exception.stacktrace');
    await provider.shutdown();
  });
});

describe('Langfuse: the real LangfuseSpanProcessor posting to 127.0.0.1', () => {
  it('exports agent.compaction with its metadata (and drops the non-gen_ai caller span)', async () => {
    receiver = await startOtlpTestServer();
    const processor = new LangfuseSpanProcessor({
      publicKey: 'pk-lf-test',
      secretKey: 'sk-lf-test',
      baseUrl: receiver.baseUrl,
      exportMode: 'immediate',
      mediaUploadEnabled: false,
    });
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer('slack-agent');
    const manager = newManager(modelSummarizer());
    instrumentManager(manager, { tracer });
    await tracer.startActiveSpan('slack.message', async (turn) => {
      await manager.preflight('C123-thread-42', history(12));
      turn.end();
    });
    await provider.forceFlush();
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      expect(request.path).toBe('/api/public/otel/v1/traces');
      expect(request.headers.authorization).toBe(
        `Basic ${Buffer.from('pk-lf-test:sk-lf-test').toString('base64')}`,
      );
    }
    const compaction = byName(receiver.spans, 'agent.compaction');
    for (const key of [
      'traceId',
      'historyMessages',
      'keepLastN',
      'originalEstimatedTokens',
      'compactedEstimatedTokens',
      'compactionApplied',
    ]) {
      expect(typeof compaction.attributes[`langfuse.observation.metadata.${key}`], key).toBe('string');
    }
    expect(compaction.attributes['langfuse.observation.metadata.traceId']).toBe('C123-thread-42');
    expect(compaction.attributes['langfuse.observation.output']).toContain('backfill invoices');
    expect(byName(receiver.spans, 'chat').attributes['gen_ai.request.model']).toBe('gpt-4o-mini');
    // Langfuse v5 drops spans without gen_ai.* attributes: the caller's plain span is not sent.
    expect(receiver.spans.some((span) => span.name === 'slack.message')).toBe(false);
    await provider.shutdown();
  });
});

describe('otelExporter (queued, after the fact)', () => {
  it('rebuilds the operation as agent.compaction under the W3C parent the events carry', async () => {
    receiver = await startOtlpTestServer();
    const provider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
    });
    const exporter = otelExporter({ tracer: provider.getTracer('t'), api });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const events = sampleCompactionEvents({
      traceId,
      parentId: '00f067aa0ba902b7',
      summary: SUMMARY,
      withError: true,
    });
    // Two batches of one operation become one span.
    await exporter.export(events.slice(0, 3));
    await exporter.export(events.slice(3));
    await exporter.forceFlush?.();
    await provider.forceFlush();
    const compactions = receiver.spans.filter((span) => span.name === 'agent.compaction');
    expect(compactions).toHaveLength(1);
    const [compaction] = compactions as [ReceivedSpan];
    expect(compaction.traceId).toBe(traceId);
    expect(compaction.parentSpanId).toBe('00f067aa0ba902b7');
    expect(compaction.startMs).toBe(events[0]?.startTime);
    expect(compaction.endMs).toBe(Math.max(...events.map((event) => event.endTime)));
    expect(compaction.status?.code).toBe(api.SpanStatusCode.ERROR);
    expect(compaction.attributes).toMatchObject({
      'compaction.tokens_before': 112_345,
      'compaction.tokens_after': 14_210,
      'compaction.pruned': 47,
      'compaction.summary_tokens': 480,
      'compaction.archived': 2,
    });
    const chat = byName(receiver.spans, 'chat');
    expect(chat.parentSpanId).toBe(compaction.spanId);
    expect(chat.endMs - chat.startMs).toBe(1240);
    await exporter.shutdown?.();
    await provider.shutdown();
  });

  it('starts a new trace when the ids are not W3C, and ends pending spans after lingerMs', async () => {
    const server = await startOtlpTestServer();
    receiver = server;
    const provider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: server.tracesUrl }))],
    });
    const exporter = otelExporter({ tracer: provider.getTracer('t'), lingerMs: 10 });
    await exporter.export(sampleCompactionEvents({ traceId: 'session-abc-123', parentId: 'caller' }));
    // No forceFlush of the exporter: its linger timer ends the span; the provider sends it.
    await until(async () => {
      await provider.forceFlush();
      return server.spans.some((span) => span.name === 'agent.compaction');
    }, 'the span ended after lingerMs');
    const compaction = byName(server.spans, 'agent.compaction');
    expect(compaction.parentSpanId).toBeUndefined();
    await provider.shutdown();
  });
});

describe('compactionAttributes', () => {
  it('reports a skipped compaction with tokens_after = tokens_before', () => {
    const [estimate] = sampleCompactionEvents();
    const decision = {
      ...sampleCompactionEvents()[1],
      properties: {
        ...(sampleCompactionEvents()[1]?.properties as object),
        triggered: false,
        kept: undefined,
      },
    } as unknown as AnyCompactEvent;
    const attributes = compactionAttributes([estimate as AnyCompactEvent, decision]);
    expect(attributes['compaction.applied']).toBe(false);
    expect(attributes['compaction.tokens_after']).toBe(112_345);
    expect(attributes['langfuse.observation.metadata.compactionApplied']).toBe('false');
    expect(compactionAttributes([])).toEqual({});
  });
});

describeExporterConformance({
  name: 'otlp (private provider, real OTLPTraceExporter)',
  keepsSpanIds: false,
  async create() {
    const server = await startOtlpTestServer();
    return {
      exporter: otlpExporter({ url: server.tracesUrl }),
      received: () => server.requests.map((request) => request.body).join('\n'),
      close: () => server.close(),
    };
  },
  async createFailing() {
    return {
      exporter: otlpExporter({ url: 'http://127.0.0.1:9/v1/traces', timeoutMs: 1000 }),
      close: async () => {},
    };
  },
});
