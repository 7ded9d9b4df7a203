import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/compact-manager.js';
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
    const savedSummary = JSON.stringify(saved.messages[0]);
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
    expect(wire[0]).toContain('Step 1');
    // Step 0 is only in the saved summary: the resumed request did carry the previous summary.
    expect(wire.slice(1).join('\n')).toContain('Step 0');
    expect(find(wire[0]!), 'fresh request').toEqual([]);
    expect(find(wire.slice(1).join('\n')), 'resumed request (previous summary)').toEqual([]);
    expect(find(JSON.stringify(fresh.messages[0])), 'fresh summary').toEqual([]);
    expect(find(JSON.stringify(resumed.messages[0])), 'resumed summary').toEqual([]);
  });
});
