import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { compactThreadHistory } from './index.js';

const servers: ProviderTestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const SUMMARY =
  'Preferences: short answers.\nFacts & Decisions: ORION-1007 shipped.\nOpen Items: review ORION-1019\nKey Context: none';

interface HistoryMessage {
  role: 'user' | 'assistant';
  content: string;
}

// A Slack thread of 40 turns, each a few hundred tokens.
function thread(turns: number): HistoryMessage[] {
  const history: HistoryMessage[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    history.push(
      {
        role: 'user',
        content: `Turn ${turn}: what is the status of ORION-${1000 + turn}? ${'context '.repeat(60)}`,
      },
      { role: 'assistant', content: `ORION-${1000 + turn} is in review. ${'detail '.repeat(60)}` },
    );
  }
  return history;
}

describe("compactThreadHistory in the spec's form (no manager)", () => {
  it('follows the spec example: summary then the last keepLastN verbatim, estimates before and after', async () => {
    const server = await startProviderTestServer({ handler: () => ({ text: SUMMARY }) });
    servers.push(server);
    const anthropic = new Anthropic({ apiKey: 'k', baseURL: server.anthropicBaseURL, maxRetries: 0 });
    const threadHistory = thread(40);
    const userMessage = 'And what about ORION-1019?';
    const systemPrompt = 'You are Orion, a concise assistant in a Slack workspace.';
    const before = structuredClone(threadHistory);

    const result = await compactThreadHistory({
      threadHistory,
      userMessage,
      systemPrompt,
      anthropic,
      model: 'claude-sonnet-4-6',
      maxSummaryTokens: 512,
      keepLastN: 4,
      traceId: 'trace-1',
    });

    expect(result.compactionApplied).toBe(true);
    expect(result.summary).toContain('ORION-1007 shipped');
    expect(result.compactedEstimatedTokens).toBeLessThan(result.originalEstimatedTokens);
    expect(result.originalEstimatedTokens).toBeGreaterThan(5_000);
    const history = result.compactedHistory;
    // One summary message, then the last 4 thread messages verbatim; the new user message is
    // counted but not appended (the caller appends it, as the spec's handler does).
    expect(history.filter((m) => JSON.stringify(m.content).includes('<COMPACT-SUMMARY v')).length).toBe(1);
    expect(history.slice(-4)).toEqual(threadHistory.slice(-4));
    expect(history.slice(-4).every((m) => !('meta' in m))).toBe(true);
    expect(JSON.stringify(history)).not.toContain(userMessage);
    expect(history.length).toBeLessThan(10);
    // The summary went through the given client with the spec's sections and the model.
    expect(server.requests.length).toBe(1);
    const body = JSON.parse(server.requests[0]!.rawBody) as { model: string };
    expect(body.model).toBe('claude-sonnet-4-6');
    expect(server.requests[0]!.rawBody).toContain('Facts & Decisions');
    expect(threadHistory).toEqual(before);
  });

  it('gives back the original history with compactionApplied false when the summary call fails', async () => {
    const server = await startProviderTestServer({
      handler: () => ({ error: { status: 500, message: 'overloaded' } }),
    });
    servers.push(server);
    const anthropic = new Anthropic({ apiKey: 'k', baseURL: server.anthropicBaseURL, maxRetries: 0 });
    // Issue 43: a 30-message thread gave back 31 (the user message appended).
    const threadHistory = thread(15);
    const before = structuredClone(threadHistory);
    const result = await compactThreadHistory({
      threadHistory,
      userMessage: 'next?',
      anthropic,
      model: 'claude-sonnet-4-6',
      maxSummaryTokens: 512,
      keepLastN: 4,
    });
    expect(server.requests.length).toBeGreaterThan(0);
    expect(result.compactionApplied).toBe(false);
    expect(result.reason).toBe('summarizer_failed');
    expect(result.summary).toBe('');
    expect(result.compactedHistory).toHaveLength(30);
    expect(result.compactedHistory).toEqual(before);
    expect(result.compactedHistory[0]).toBe(threadHistory[0]);
  });

  it('leaves a short thread alone and names bad arguments', async () => {
    const anthropic = new Anthropic({ apiKey: 'k', baseURL: 'http://127.0.0.1:9', maxRetries: 0 });
    const result = await compactThreadHistory({
      threadHistory: thread(1),
      anthropic,
      userMessage: 'next?',
      model: 'claude-sonnet-4-6',
      keepLastN: 6,
    });
    expect(result.compactionApplied).toBe(false);
    expect(result.compactedHistory).toEqual(thread(1));
    expect(result.originalEstimatedTokens).toBeGreaterThan(0);
    await expect(
      compactThreadHistory({ threadHistory: [], anthropic: {} as Anthropic, model: 'm' }),
    ).rejects.toMatchObject({ code: 'invalid_config', issues: [{ path: ['anthropic'] }] });
    await expect(
      compactThreadHistory({ threadHistory: [], anthropic, model: 'm', keepLastN: -1 }),
    ).rejects.toMatchObject({ code: 'invalid_config', issues: [{ path: ['keepLastN'] }] });
  });
});
