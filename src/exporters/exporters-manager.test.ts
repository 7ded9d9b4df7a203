import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyCompactEvent, EventExporter } from '../core/events/events.js';
import { CompactManager } from '../core/manager/compact-manager.js';
import type { Summarizer } from '../core/summary/summarizer.js';
import { fsStorage } from '../storage/fs/fs-storage.js';
import {
  type AriadneTestServer,
  startAriadneTestServer,
  subscribeAriadne,
} from '../testing/ariadne-test-server.js';
import { ariadneExporter } from './ariadne/ariadne-exporter.js';
import { consoleExporter } from './console/console-exporter.js';

const SECRET = 'sk-proj-Zx81kQv3LmN7pR2tY6wE9uI0oPa';
const PASSWORD = 'Tr0ub4dor&3-horse';

function history(turns: number) {
  const messages: Record<string, unknown>[] = [{ role: 'system', content: 'You are a deploy agent.' }];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({
      role: 'user',
      content: `Deploy step ${turn} with api_key=${SECRET} please. ${'Check the logs and roll forward. '.repeat(8)}`,
    });
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${turn}`,
          type: 'function',
          function: {
            name: 'shell',
            arguments: JSON.stringify({ cmd: `psql --password=${PASSWORD} -c "select ${turn}"` }),
          },
        },
      ],
    });
    messages.push({
      role: 'tool',
      tool_call_id: `call_${turn}`,
      content: `ok ${turn}: Authorization: Bearer ${SECRET}`,
    });
    messages.push({ role: 'assistant', content: `Step ${turn} done. ${'Everything is green. '.repeat(8)}` });
  }
  return messages;
}

const summarizer: Summarizer = {
  name: 'test-llm',
  async summarize(request) {
    // Echo a fragment of the (unredacted) input, as a careless model might.
    return {
      text: `Goal: deploy. Done: ${request.messages.length} messages. Saw: ${request.messages.find((message) => message.text.includes('api_key'))?.text.slice(0, 80)}`,
      model: 'gpt-4o-mini',
      usage: { inputTokens: 2000, outputTokens: 40 },
    };
  },
};

function newManager(exporters: EventExporter[], archive?: string) {
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
    exporters,
    ...(archive ? { storage: fsStorage({ path: archive }) } : {}),
  });
}

let server: AriadneTestServer | undefined;
let archive: string | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (archive) await rm(archive, { recursive: true, force: true });
  archive = undefined;
});

describe('a real compaction exported to Ariadne and archived on disk', () => {
  it('streams its spans over SSE with parent links, durations, figures and the summary; no secret leaves', async () => {
    server = await startAriadneTestServer();
    archive = await mkdtemp(join(tmpdir(), 'compact-e2e-'));
    const consoleLines: string[] = [];
    const manager = newManager(
      [
        ariadneExporter({ url: server.ingestUrl, timeoutMs: 30_000, log: (line) => consoleLines.push(line) }),
        consoleExporter({ format: 'json', stream: { write: (chunk: string) => consoleLines.push(chunk) } }),
      ],
      archive,
    );
    const subscription = await subscribeAriadne(server.baseUrl, { traceId: 'deploy-session' });
    const messages = history(10);
    const original = JSON.stringify(messages);
    const result = await manager.compact('deploy-session', messages);
    expect(result.applied, `${result.reason} ${result.tokensBefore}`).toBe(true);
    expect(JSON.stringify(messages)).toBe(original);
    await manager.flush();
    const arrived = await subscription.waitFor((events) =>
      events.some((event) => event.name === 'compact.pruned_messages'),
    );
    subscription.close();
    await manager.shutdown();

    const spans = arrived.filter((event) => event.type === 'span');
    const named = (name: string) => spans.find((span) => span.name === name);
    const decision = named('compact.trigger_decision');
    const summary = named('compact.summary_created');
    const pruned = named('compact.pruned_messages');
    expect(decision && summary && pruned).toBeTruthy();
    // Children hang under the trigger decision, which is itself in the stream.
    expect(summary?.parent_id).toBe(decision?.span_id);
    expect(pruned?.parent_id).toBe(decision?.span_id);
    for (const span of spans) {
      expect(Date.parse(span.ended_at as string)).toBeGreaterThanOrEqual(
        Date.parse(span.started_at as string),
      );
      expect((span.data as Record<string, unknown>).duration_ms).toBe(
        Date.parse(span.ended_at as string) - Date.parse(span.started_at as string),
      );
    }
    expect(summary?.data).toMatchObject({
      model: 'gpt-4o-mini',
      usage: { input_tokens: 2000, output_tokens: 40 },
      output_text: expect.stringContaining('Goal: deploy.'),
    });
    expect(pruned?.data).toMatchObject({
      tokens_before: result.tokensBefore,
      tokens_after: result.tokensAfter,
    });
    expect(spans.some((span) => span.name === 'compact.archival')).toBe(true);
    expect(arrived.find((event) => event.type === 'trace')?.metadata).toMatchObject({
      session_id: 'deploy-session',
    });

    // No secret in any exported byte or archived file.
    const wire = server.requests.map((request) => request.body).join('\n') + consoleLines.join('');
    // Every archived file, artifacts (originals of cleared or cut messages) included.
    const files = (await readdir(join(archive, 'deploy-session'), { recursive: true })).filter((file) =>
      /\.jsonl?$/.test(file),
    );
    expect(files).toEqual(
      expect.arrayContaining([
        'events.jsonl',
        expect.stringMatching(/^summary-001-[0-9a-z-]+\.json$/),
        expect.stringMatching(/^transcript-pre-compact-001-[0-9a-z-]+\.jsonl$/),
      ]),
    );
    const archived = (
      await Promise.all(files.map((file) => readFile(join(archive!, 'deploy-session', file), 'utf8')))
    ).join('\n');
    for (const text of [wire, archived]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(PASSWORD);
      expect(text).toContain('<REDACTED>');
    }
    const archivedEvents = (await readFile(join(archive, 'deploy-session', 'events.jsonl'), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as AnyCompactEvent);
    expect(archivedEvents.some((event) => event.name === 'compact.archival')).toBe(true);
  });

  it('returns from preflight while the receiver is still answering, and flush waits for it', async () => {
    server = await startAriadneTestServer({ delayMs: 1500 });
    const inner = ariadneExporter({ url: server.ingestUrl, timeoutMs: 10_000, log: () => {} });
    let exported = 0;
    const tracked: EventExporter = {
      name: 'tracked-ariadne',
      async export(events) {
        await inner.export(events);
        exported += events.length;
      },
    };
    const manager = newManager([tracked]);
    const sent = await manager.preflight('slow-session', history(10));
    expect(sent.length).toBeGreaterThan(0);
    expect(exported).toBe(0);
    await manager.flush();
    expect(exported).toBeGreaterThan(0);
    expect(server.events.some((event) => event.name === 'compact.summary_created')).toBe(true);
    await manager.shutdown();
  });

  it('never throws into the agent loop when Ariadne is down', async () => {
    const lines: string[] = [];
    const manager = newManager([
      ariadneExporter({ url: 'http://127.0.0.1:9/ingest', log: (line) => lines.push(line) }),
    ]);
    await expect(manager.preflight('down-session', history(10))).resolves.toBeDefined();
    await manager.shutdown();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((line) => line.startsWith('[Ariadne] '))).toBe(true);
  });
});

describe('listeners that fail', () => {
  it('an async listener that rejects costs neither the compaction nor the process', async () => {
    const manager = newManager([]);
    let outcome: (value: string) => void = () => {};
    const settled = new Promise<string>((resolve) => {
      outcome = resolve;
    });
    // Unhandled, the rejection would end a Node process (--unhandled-rejections=throw).
    const unhandled = (reason: unknown) => outcome(`unhandled: ${String((reason as Error)?.message)}`);
    process.on('unhandledRejection', unhandled);
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      if (String(chunk).includes('listener failed: async boom')) outcome('reported');
      return true;
    }) as typeof process.stderr.write;
    try {
      manager.on('compact.summary_created', async () => {
        throw new Error('async boom');
      });
      manager.on('*', () => {
        throw new Error('sync boom');
      });
      const result = await manager.compact('listener-session', history(10), { force: true });
      expect(result.applied).toBe(true);
      expect(await settled).toBe('reported');
    } finally {
      process.stderr.write = original;
      process.off('unhandledRejection', unhandled);
    }
  });
});
