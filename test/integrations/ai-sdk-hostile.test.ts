/**
 * Review 80 (a new user's hostile review), the AI SDK: a tool loop after one long user message
 * (a pasted spec). Once the spec is folded into the summary, the summary opens the
 * conversation, and the integration wrote it as an assistant turn: the model's first message
 * was an assistant one, which Anthropic ("first message must use the user role") and Gemini
 * refuse whatever model the middleware wraps. The summary that opens the conversation now goes
 * as a user turn; handed back in a persisted view it still resumes (one summary, versions one
 * by one, as with the assistant turn before).
 *
 * And `compactionPrepareStep` in AI SDK 6's tool approval flow (`needsApproval`): the step's
 * messages hold the approval response as a tool message of its own between the call and its
 * result, which the conversion made a user turn there, parting the call from its result:
 * every step after an approval threw `invalid_messages` (unanswered tool call). It now goes back
 * just before the result's tool message, and the call keeps its result.
 *
 * And a protected tool round kept ahead of the summary (pinned messages go first) opened the
 * conversation with its assistant turn: the summary now goes first there, as a user turn (as the
 * manager orders an Anthropic-format request).
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  compactionMiddleware,
  compactionPrepareStep,
  compactMessages,
} from '../../src/adapters/ai-sdk/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { reusedIdLoop, toolOutput, WINDOW } from '../support/tool-loop.js';

const STEPS = 30;
const SPEC = `Here is the spec. ${'The service must validate every request and log it. '.repeat(200)}`;
const KEY = 'review-80-summary-key-of-32-bytes-or-more';

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a summary that opens the conversation', () => {
  it('goes to the provider as a user turn', async () => {
    server = await startProviderTestServer({
      handler: reusedIdLoop({ tool: 'probe', steps: STEPS, idFor: (n) => `call_${n}` }),
    });
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    const provider = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
    let step = 0;
    const probe = tool({
      description: 'Probe the next host',
      inputSchema: z.object({ step: z.number() }),
      execute: async () => toolOutput(step++),
    });
    const messages: ModelMessage[] = [{ role: 'user', content: SPEC }];
    await generateText({
      model: wrapLanguageModel({
        model: provider.chat('gpt-4o'),
        middleware: compactionMiddleware(manager, { sessionId: 'spec-loop' }),
      }),
      system: 'You are an SRE agent.',
      tools: { probe },
      messages,
      stopWhen: stepCountIs(STEPS + 2),
    });
    await manager.shutdown();
    const bodies = server.requests.map(
      (request) => request.body as { messages: { role: string; content: unknown }[] },
    );
    const summarized = bodies.filter((body) => JSON.stringify(body.messages).includes('<COMPACT-SUMMARY v'));
    expect(summarized.length).toBeGreaterThan(0);
    // The spec itself went into the summary on some request: the summary opened it.
    const opening = (body: (typeof bodies)[number]) =>
      JSON.stringify(body.messages.find((message) => message.role !== 'system')).includes(
        '<COMPACT-SUMMARY v',
      );
    expect(summarized.some(opening)).toBe(true);
    for (const body of bodies) {
      const first = body.messages.find((message) => message.role !== 'system');
      expect(first?.role).toBe('user');
    }
  });

  it('resumes from a persisted view: one summary, versions one by one', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW, summaryKeys: KEY });
    let view: ModelMessage[] = [{ role: 'user', content: SPEC }];
    const versions: number[] = [];
    for (let k = 0; k < 60; k++) {
      view.push(
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: `c${k}`, toolName: 'probe', input: {} }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: `c${k}`,
              toolName: 'probe',
              output: { type: 'text', value: toolOutput(k) },
            },
          ],
        },
      );
      const { messages, result } = await compactMessages(manager, 'persisted', view);
      view = messages;
      if (result.summary && versions.at(-1) !== result.version) versions.push(result.version);
      const summaries = view.filter((message) =>
        JSON.stringify(message.content).includes('<COMPACT-SUMMARY v'),
      );
      expect(summaries.length).toBeLessThanOrEqual(1);
      // The view's summary is the session's current one (a summary not read back as one lags).
      if (summaries[0])
        expect(JSON.stringify(summaries[0].content)).toContain(`<COMPACT-SUMMARY v${result.version}>`);
    }
    await manager.shutdown();
    expect(versions.length).toBeGreaterThan(1);
    expect(versions).toEqual(versions.map((_, k) => versions[0]! + k));
    expect(view[0]?.role).toBe('user');
  });
});

describe('a protected tool round ahead of the summary', () => {
  it('leaves the summary first, as a user turn', async () => {
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: 6_000 });
    const history: ModelMessage[] = [{ role: 'system', content: 'You are an SRE agent.' }];
    for (let k = 0; k < 40; k++) {
      history.push({
        role: 'user',
        content: k === 0 ? SPEC : `Task ${k}: ${'please probe the host '.repeat(12)}`,
      });
      history.push({
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: `c${k}`, toolName: 'probe', input: {} }],
      });
      history.push({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: `c${k}`,
            toolName: 'probe',
            output: { type: 'text', value: toolOutput(k) },
          },
        ],
        // The license check's result is kept whatever happens (its round with it).
        ...(k === 3 ? { providerOptions: { agentCompaction: { protected: true } } } : {}),
      });
      history.push({ role: 'assistant', content: `Done ${k}.` });
    }
    history.push({ role: 'user', content: 'Next?' });
    const { messages } = await compactMessages(manager, 'pinned-round', history);
    await manager.shutdown();
    const first = messages.findIndex((message) => message.role !== 'system');
    expect(messages[first]?.role).toBe('user');
    expect(JSON.stringify(messages[first]?.content)).toContain('<COMPACT-SUMMARY v');
    const call = messages.findIndex((message) =>
      JSON.stringify(message.content).includes('"toolCallId":"c3"'),
    );
    expect(messages[call]?.role).toBe('assistant');
    expect(messages[call + 1]?.role).toBe('tool');
  });
});

describe('compactionPrepareStep in a tool approval flow', () => {
  it('compacts the steps after an approval, the response kept before the result', async () => {
    server = await startProviderTestServer({
      handler: reusedIdLoop({ tool: 'remove', steps: 1, idFor: () => 'call_rm' }),
    });
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    const provider = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
    const remove = tool({
      description: 'Remove a file',
      inputSchema: z.object({ step: z.number() }),
      needsApproval: true,
      execute: async () => 'removed',
    });
    const seen: ModelMessage[][] = [];
    const compact = compactionPrepareStep(manager, { sessionId: 'approvals' });
    const prepareStep: typeof compact = async (args) => {
      const prepared = await compact(args);
      seen.push(prepared.messages);
      return prepared;
    };
    const messages: ModelMessage[] = [{ role: 'user', content: 'Remove the temp file.' }];
    const first = await generateText({
      model: provider.chat('gpt-4o'),
      tools: { remove },
      messages,
      prepareStep,
    });
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    expect(request).toBeDefined();
    messages.push(...first.response.messages, {
      role: 'tool',
      content: [{ type: 'tool-approval-response', approvalId: String(request?.approvalId), approved: true }],
    });
    const second = await generateText({
      model: provider.chat('gpt-4o'),
      tools: { remove },
      messages,
      prepareStep,
    });
    await manager.shutdown();
    expect(second.text).toContain('Done');
    // The step after the approval: the call, the approval response, then its result.
    const roles = seen
      .at(-1)!
      .map((message) =>
        typeof message.content === 'string'
          ? message.role
          : `${message.role}:${message.content.map((part) => part.type).join('+')}`,
      );
    expect(roles).toEqual([
      'user',
      'assistant:tool-call+tool-approval-request',
      'tool:tool-approval-response',
      'tool:tool-result',
    ]);
  });
});
