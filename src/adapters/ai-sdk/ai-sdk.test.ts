import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from 'ai';
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
import {
  type AiSdkMessage,
  aiSdkToChat,
  callToolSchemas,
  chatToAiSdk,
  compactionMiddleware,
  compactionPrepareStep,
  compactMessages,
  toolOutputText,
} from './index.js';

function fileBody(path: string): string {
  return Array.from(
    { length: 40 },
    (_, line) => `// ${path} line ${line}: export const v${line} = compute(${line});`,
  ).join('\n');
}

const tools = {
  read_file: tool({
    description: 'Read a file of the repository',
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => fileBody(path),
  }),
};

function newManager(): { manager: CompactManager; events: AnyCompactEvent[] } {
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 6000,
    policy: {
      triggerPct: 0.6,
      hardCapBuffer: 600,
      keepRecentTurns: 2,
      keepToolIoPairs: 2,
      maxSummaryTokens: 300,
    },
  });
  const events: AnyCompactEvent[] = [];
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  return { manager, events };
}

let server: ProviderTestServer;

beforeEach(async () => {
  server = await startProviderTestServer({
    handler: toolLoopHandler({
      tool: 'read_file',
      callsPerTurn: 8,
      argumentsFor: (n) => ({ path: `src/f${n}.ts` }),
    }),
  });
});

afterEach(async () => {
  await server.close();
});

function expectEveryRequestSound(manager: CompactManager) {
  const views = server.requests.map(readRequest).filter((view) => !isSummarizationRequest(view));
  expect(views.length).toBeGreaterThan(0);
  for (const view of views) {
    expect(toolPairProblems(view)).toEqual([]);
    expect(requestTokens(manager, view)).toBeLessThanOrEqual(manager.budget);
  }
  return views;
}

describe('compactionMiddleware with generateText', () => {
  it('compacts inside a multi-step tool loop and across turns', async () => {
    const { manager, events } = newManager();
    const provider = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
    const model = wrapLanguageModel({
      model: provider.chat('gpt-4o'),
      middleware: compactionMiddleware(manager, { sessionId: 'ai-1' }),
    });
    const messages: ModelMessage[] = [
      { role: 'system', content: 'You are a coding assistant.' },
      { role: 'user', content: 'Read the first eight files and explain them.' },
    ];
    // The system prompt is a message on purpose (the view keeps it pinned first), not noise.
    const first = await generateText({
      model,
      tools,
      messages,
      allowSystemInMessages: true,
      stopWhen: stepCountIs(12),
    });
    expect(first.steps.length).toBe(9);
    expect(first.text).toContain('Done:');
    messages.push(...first.response.messages, { role: 'user', content: 'Now read eight more.' });
    const second = await generateText({
      model,
      tools,
      messages,
      allowSystemInMessages: true,
      stopWhen: stepCountIs(12),
    });
    expect(second.text).toContain('Done:');

    // Compactions ran (clearing old tool output first; summarizing only when that is not enough).
    const reductions = events.filter((event) => event.name === 'compact.reduction');
    expect(reductions.length).toBeGreaterThanOrEqual(1);
    const views = expectEveryRequestSound(manager);
    expect(views.length).toBe(18);
    const summarized = events.some((event) => event.name === 'compact.summary_created');
    const cleared = (text: string) => text.includes('[cleared: ');
    expect(
      views
        .at(-1)!
        .entries.some(
          (entry) => entry.text.includes('<COMPACT-SUMMARY v') || (!summarized && cleared(entry.text)),
        ),
    ).toBe(true);
    expect(views.every((view) => view.entries[0]?.kind === 'system')).toBe(true);
    // Without compaction the last request would not fit.
    const full = aiSdkToChat(messages as AiSdkMessage[]);
    expect(manager.estimate(full).total).toBeGreaterThan(manager.budget);
  });

  it('reads the session id from providerOptions and reports each check', async () => {
    const { manager, events } = newManager();
    const provider = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
    const checks: string[] = [];
    const model = wrapLanguageModel({
      model: provider.chat('gpt-4o'),
      middleware: compactionMiddleware(manager, {
        onCompaction: (result, id) => checks.push(`${id}:${result.applied}`),
      }),
    });
    await generateText({
      model,
      prompt: 'hello',
      providerOptions: { agentCompaction: { sessionId: 'from-options' } },
    });
    expect(checks).toEqual(['from-options:false']);
    expect(events[0]?.sessionId).toBe('from-options');
  });
});

describe('compactionPrepareStep with generateText', () => {
  it('compacts the step messages', async () => {
    const { manager, events } = newManager();
    const provider = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
    const result = await generateText({
      model: provider.chat('gpt-4o'),
      tools,
      messages: [{ role: 'user', content: 'Read eight files.' }],
      stopWhen: stepCountIs(12),
      prepareStep: compactionPrepareStep(manager, {
        sessionId: 'steps',
        tools: callToolSchemas([{ name: 'read_file', inputSchema: {} }]),
      }),
    });
    expect(result.text).toContain('Done:');
    expect(events.some((event) => event.name === 'compact.pruned_messages')).toBe(true);
    expectEveryRequestSound(manager);
  });
});

describe('AI SDK message conversion', () => {
  const prompt: AiSdkMessage[] = [
    { role: 'system', content: 'sys' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'file', mediaType: 'image/png', data: 'AAAA' },
      ],
      providerOptions: { agentCompaction: { protected: true, label: 'brief' } },
    },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'thinking' },
        { type: 'text', text: 'calling' },
        { type: 'tool-call', toolCallId: 'a', toolName: 't', input: { x: 1 } },
        { type: 'tool-call', toolCallId: 'b', toolName: 't', input: { x: 2 } },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'a',
          toolName: 't',
          output: { type: 'json', value: { ok: true } },
        },
        { type: 'tool-result', toolCallId: 'b', toolName: 't', output: { type: 'text', value: 'B' } },
      ],
    },
  ];

  it('round-trips every message as the original object', () => {
    const chat = aiSdkToChat(prompt);
    expect(chat.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(chat[1]).toMatchObject({
      // The image goes along as the Chat part the counter reads.
      content: [
        { type: 'text', text: 'look\n[file image/png]' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      ],
      meta: { protected: true, label: 'brief' },
    });
    expect(chat[2]).toMatchObject({
      content: 'thinking\ncalling',
      tool_calls: [{ id: 'a', function: { name: 't', arguments: '{"x":1}' } }, { id: 'b' }],
    });
    expect(chat[3]).toMatchObject({ tool_call_id: 'a', content: '{"ok":true}' });
    const back = chatToAiSdk(chat, 'prompt');
    expect(back).toHaveLength(4);
    back.forEach((message, k) => {
      expect(message).toBe(prompt[k]);
    });
  });

  it('rebuilds a tool message when some results were dropped, and writes summaries per format', () => {
    const chat = aiSdkToChat(prompt);
    const partial = chatToAiSdk(
      [chat[0], { role: 'assistant', content: 'SUMMARY' }, chat[2], chat[4]],
      'prompt',
    );
    expect(partial[1]).toEqual({ role: 'user', content: [{ type: 'text', text: 'SUMMARY' }] });
    expect(chatToAiSdk([chat[1], { role: 'assistant', content: 'S' }], 'prompt')[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'S' }],
    });
    expect(partial[3]).toEqual({ role: 'tool', content: [prompt[3]!.content[1]] });
    // A summary opening the conversation is a user turn (review 80: Anthropic and Gemini refuse
    // an opening assistant turn).
    expect(chatToAiSdk([{ role: 'assistant', content: 'S' }], 'model-messages')).toEqual([
      { role: 'user', content: 'S' },
    ]);
  });

  it('keeps protected messages through a compaction', async () => {
    const { manager } = newManager();
    const long = Array.from({ length: 30 }, (_, k): AiSdkMessage[] => [
      { role: 'user', content: `question ${k} ${'lorem ipsum '.repeat(40)}` },
      { role: 'assistant', content: `answer ${k} ${'dolor sit '.repeat(40)}` },
    ]).flat();
    const { messages, result } = await compactMessages(manager, 'protect', [...prompt, ...long]);
    expect(result.applied).toBe(true);
    expect(messages).toContain(prompt[1]);
    expect(messages).toContain(prompt[0]);
    expect(messages.length).toBeLessThan(prompt.length + long.length);
  });

  it('renders every tool output type as text', () => {
    expect(toolOutputText({ type: 'error-text', value: 'boom' })).toBe('boom');
    expect(toolOutputText({ type: 'error-json', value: { e: 1 } })).toBe('{"e":1}');
    expect(toolOutputText({ type: 'execution-denied', reason: 'no' })).toBe('[execution denied: no]');
    expect(
      toolOutputText({ type: 'content', value: [{ type: 'text', text: 'a' }, { type: 'file-data' }] }),
    ).toBe('a\n[file-data]');
    expect(toolOutputText('plain')).toBe('plain');
    expect(toolOutputText({ type: 'other' })).toBe('{"type":"other"}');
    expect(
      callToolSchemas([
        { type: 'provider', name: 'x' },
        { type: 'function', name: 'f', inputSchema: { a: 1 } },
      ]),
    ).toEqual([{ type: 'function', name: 'f', description: '', parameters: { a: 1 } }]);
  });
});
