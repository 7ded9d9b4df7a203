import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { summaryVersionOf } from '../../core/messages/message.js';
import { anthropicSummarizer } from '../../summarizers/anthropic/index.js';
import { readRequest, requestTokens } from '../../testing/agent-model-script.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { compactThreadHistory, type HistoryMessage, THREAD_SUMMARY_SYSTEM_PROMPT } from './index.js';

const SYSTEM = 'You are Orion, a concise assistant in a Slack workspace.';
const SUMMARY =
  'Preferences: short answers.\nFacts & Decisions: ORION-1000 tracked.\nOpen Items: none\nKey Context: none';

const servers: ProviderTestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function update(turn: number): string {
  return `Status update ${turn} on ORION-${1000 + turn}: ${'the deployment pipeline finished its checks; '.repeat(40)}`;
}

describe('compactThreadHistory: a thin helper over CompactManager', () => {
  it('keeps a 30-turn thread under the window, one session, bounded summarizer calls, protected messages kept', async () => {
    const agentServer = await startProviderTestServer({ handler: () => ({ text: 'Noted.' }) });
    const summaryServer = await startProviderTestServer({ handler: () => ({ text: SUMMARY }) });
    servers.push(agentServer, summaryServer);
    const anthropic = new Anthropic({ apiKey: 'k', baseURL: agentServer.anthropicBaseURL, maxRetries: 0 });
    const summarizer = anthropicSummarizer({
      model: 'claude-haiku-4-5',
      client: new Anthropic({ apiKey: 'k', baseURL: summaryServer.anthropicBaseURL, maxRetries: 0 }),
      contextTokens: 4000,
      prompts: { default: THREAD_SUMMARY_SYSTEM_PROMPT },
    });
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: 8000, summarizer });
    const events: AnyCompactEvent[] = [];
    manager.on('*', (event) => events.push(event as AnyCompactEvent));
    // A plain MessageParam[] (no cast), with a protected policy message.
    const thread: (Anthropic.MessageParam & Pick<HistoryMessage, 'meta'>)[] = [
      {
        role: 'user',
        content: 'Policy: never post secrets in the thread.',
        meta: { protected: true, label: 'policy' },
      },
      { role: 'assistant', content: 'Understood.' },
    ];
    const versions: number[] = [];
    for (let turn = 1; turn <= 30; turn++) {
      const userMessage = update(turn);
      const result = await compactThreadHistory({
        manager,
        sessionId: 'thread-1',
        systemPrompt: SYSTEM,
        threadHistory: thread,
        userMessage,
      });
      expect(result).toMatchObject({ format: 'anthropic', budget: manager.budget });
      expect(result.tokensAfter).toBeLessThanOrEqual(result.tokensBefore);
      versions.push(result.version);
      const reply = await anthropic.messages.create({
        model: 'claude-sonnet-4-6',
        system: SYSTEM,
        max_tokens: 64,
        messages: result.messages,
      });
      thread.push({ role: 'user', content: userMessage }, { role: 'assistant', content: reply.content });
    }
    // One engine, one session: the summary grows v1, v2, ... and never restarts.
    expect(Math.max(...versions)).toBeGreaterThanOrEqual(2);
    versions.slice(1).forEach((version, k) => {
      expect(version).toBeGreaterThanOrEqual(versions[k]!);
    });
    for (const request of agentServer.requests) {
      const view = readRequest(request);
      expect(requestTokens(manager, view)).toBeLessThanOrEqual(8000);
      expect(view.entries[0]?.text).toContain('never post secrets');
      expect(request.rawBody).not.toContain('"meta"');
      expect(request.rawBody.split('<COMPACT-SUMMARY v').length - 1).toBeLessThanOrEqual(1);
      expect(view.entries.at(-1)?.text).toMatch(/^Status update \d+/);
    }
    const last = readRequest(agentServer.requests.at(-1)!);
    expect(
      summaryVersionOf(last.entries.find((entry) => entry.text.startsWith('<COMPACT'))?.text ?? ''),
    ).toBe(versions.at(-1));
    // The summarizer got the spec 004 prompt and never more than its own context.
    expect(summaryServer.requests.length).toBeGreaterThan(0);
    for (const request of summaryServer.requests) {
      expect(request.rawBody).toContain('Facts & Decisions');
      expect(requestTokens(manager, readRequest(request))).toBeLessThanOrEqual(4000);
    }
    expect(events.filter((event) => event.name === 'compact.summary_created').length).toBeGreaterThan(0);
  });

  it('returns the thread unchanged below the trigger, with the new message appended', async () => {
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: 8000 });
    const threadHistory: HistoryMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    const result = await compactThreadHistory({
      manager,
      sessionId: 't',
      threadHistory,
      userMessage: 'status?',
    });
    expect(result.applied).toBe(false);
    expect(result.messages).toEqual([...threadHistory, { role: 'user', content: 'status?' }]);
    expect(result.messages[0]).toBe(threadHistory[0]);
  });

  it('names the field of bad input', async () => {
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: 8000 });
    await expect(
      compactThreadHistory({ manager, sessionId: 't', threadHistory: 'nope' as unknown as HistoryMessage[] }),
    ).rejects.toMatchObject({ code: 'invalid_messages', issues: [{ path: ['threadHistory'] }] });
    await expect(
      compactThreadHistory({ manager: {} as CompactManager, sessionId: 't', threadHistory: [] }),
    ).rejects.toMatchObject({ code: 'invalid_config' });
  });
});
