import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { openaiSummarizer } from '../../src/summarizers/openai/openai-summarizer.js';
import type { RecordedRequest } from '../../src/testing/provider-test-server.js';
import { useProviderTestServer } from '../fixtures/summarizers/use-provider-test-server.js';
import { leakFinder, oneOfEachKind, type PlantedSecret } from './support/secret-shapes.js';

/**
 * The summarizer wire is a sink too: what an LLM summarizer sends to its provider, for a
 * fresh history and for a saved compacted history resumed by a new manager (its previous
 * summary included), carries no secret with default settings.
 */

const startServer = useProviderTestServer();

function history(secrets: readonly PlantedSecret[], from = 0): Record<string, unknown>[] {
  return secrets.flatMap((planted, index) => [
    { role: 'user', content: `Step ${from + index}: use this credential:\n${planted.text}\nthen deploy.` },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_0',
          type: 'function',
          function: { name: 'shell', arguments: JSON.stringify({ cmd: `deploy --cred ${planted.text}` }) },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_0', content: `rejected ${planted.text}\n${'log line\n'.repeat(20)}` },
    { role: 'assistant', content: `Step ${from + index} failed.` },
  ]);
}

/** The summary message of a compacted view. */
function summaryOf(messages: readonly unknown[]): unknown {
  const found = messages.find((message) => JSON.stringify(message).includes('<COMPACT-SUMMARY v'));
  expect(found).toBeDefined();
  return found;
}

/** A model that quotes the first 600 characters of what it was given (as models do). */
function echo(request: RecordedRequest) {
  const body = request.body as { messages: { content: string }[] };
  const input = body.messages.map((message) => message.content).join('\n');
  return { text: `## Goals\n- ${input.slice(0, 600)}`, usage: { inputTokens: 100, outputTokens: 50 } };
}

describe('the summarizer wire', () => {
  it('carries no secret, fresh or resumed from a saved history whose summary holds secrets', async () => {
    const server = await startServer({ handler: echo });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test', maxRetries: 0 });
    const first = oneOfEachKind(500);
    const later = oneOfEachKind(600);
    const find = leakFinder([...first, ...later]);

    // A history saved by a manager that kept secrets in its summary (opted out).
    const optedOut = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 6000,
      redactSummarizerInput: false,
    });
    const saved = await optedOut.manualCompact('wire', history(first));
    const savedSummary = JSON.stringify(summaryOf(saved.messages));
    expect(savedSummary).toContain('COMPACT-SUMMARY');
    expect(find(savedSummary).length).toBeGreaterThan(0);
    await optedOut.shutdown();

    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 6000,
      summarizer: openaiSummarizer({ model: 'gpt-4o-mini', client, maxRetries: 0 }),
    });
    const fresh = await manager.manualCompact('fresh', history(first));
    const resumed = await manager.manualCompact('resumed', [...saved.messages, ...history(later, 14)]);
    await manager.shutdown();

    expect(server.requests.length).toBeGreaterThanOrEqual(2);
    const wire = server.requests.map((request) => request.rawBody);
    // The user's own messages are kept verbatim (issue 20), so the wire carries the tool work.
    expect(wire[0]).toContain('deploy --cred');
    expect(find(wire[0]!), 'fresh request').toEqual([]);
    // A summary read back by another manager is untrusted content (issue 23): whatever of it
    // reaches the summarizer is redacted like any message.
    expect(find(wire.slice(1).join('\n')), 'resumed request (previous summary)').toEqual([]);
    expect(find(JSON.stringify(summaryOf(fresh.messages))), 'fresh summary').toEqual([]);
    expect(find(JSON.stringify(summaryOf(resumed.messages))), 'resumed summary').toEqual([]);
  });

  it("carries no secret of a manual compaction's note (a user's `/compact ...` text)", async () => {
    const server = await startServer({ handler: echo });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test', maxRetries: 0 });
    const secrets = oneOfEachKind(700);
    const find = leakFinder(secrets);
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 6000,
      summarizer: openaiSummarizer({ model: 'gpt-4o-mini', client, maxRetries: 0 }),
    });
    const note = `focus on the deploy; the credentials are ${secrets.map((planted) => planted.text).join(' and ')}`;
    // The test can fail: every kind is in the note.
    expect(new Set(find(note).map((leak) => leak.split(':')[0])).size).toBe(14);
    await manager.manualCompact('noted', history(oneOfEachKind(710).slice(0, 2)), { note });
    await manager.shutdown();

    expect(server.requests.length).toBe(1);
    const wire = server.requests[0]!.rawBody;
    expect(wire).toContain('focus on the deploy');
    expect(find(wire), 'note on the wire').toEqual([]);
  });
});
