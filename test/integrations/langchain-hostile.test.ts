/**
 * Review 80 (a new user's hostile review), LangChain: a protected tool result (its round pinned
 * with it) in a long conversation whose first user message was folded into the summary. The
 * manager keeps pinned messages ahead of the summary, so the model call opened with the pinned
 * round's AIMessage, which Anthropic ("first message must use the user role") and Gemini refuse.
 * The summary (a HumanMessage) now goes first there.
 * Then (core-81) the same with a SystemMessage opening the agent's messages: the rule read only
 * the first message, so a system message ahead of the pinned round left the AIMessage the first
 * turn (the rule is now the core's `summaryFirst`, system messages skipped as the AI SDK's did).
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { compactionMiddleware } from '../../src/adapters/langchain/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { toolOutput } from '../support/tool-loop.js';

const SPEC = `Here is the spec. ${'The service must validate every request and log it. '.repeat(200)}`;

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('LangChain: a protected tool round ahead of the summary', () => {
  it.each([
    { name: 'the model call opens with the summary, a user turn', system: false },
    { name: 'after a SystemMessage among the messages too', system: true },
  ])('$name', async ({ system }) => {
    server = await startProviderTestServer({ handler: () => ({ text: 'Done.' }) });
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 6_000 });
    const messages: (AIMessage | HumanMessage | SystemMessage | ToolMessage)[] = [];
    if (system) messages.push(new SystemMessage('You are an SRE agent.'));
    for (let k = 0; k < 40; k++) {
      messages.push(new HumanMessage(k === 0 ? SPEC : `Task ${k}: ${'please probe the host '.repeat(12)}`));
      messages.push(
        new AIMessage({
          content: '',
          tool_calls: [{ id: `c${k}`, name: 'probe', args: {}, type: 'tool_call' }],
        }),
      );
      messages.push(
        new ToolMessage({
          content: toolOutput(k),
          tool_call_id: `c${k}`,
          // The license check's result is kept whatever happens (its round with it).
          ...(k === 3 ? { additional_kwargs: { agentCompaction: { protected: true } } } : {}),
        }),
      );
      messages.push(new AIMessage(`Done ${k}.`));
    }
    messages.push(new HumanMessage('Next?'));
    const agent = createAgent({
      model: new ChatOpenAI({
        model: 'gpt-4o',
        apiKey: 'test-key',
        maxRetries: 0,
        configuration: { baseURL: server.openaiBaseURL },
      }),
      tools: [],
      middleware: [compactionMiddleware(manager, { sessionId: 'pinned-round' })],
    });
    await agent.invoke({ messages });
    await manager.shutdown();
    const sent = (server.requests[0]!.body as { messages: { role: string; content: unknown }[] }).messages;
    const first = sent.find((message) => message.role !== 'system');
    expect(first?.role).toBe('user');
    expect(JSON.stringify(first?.content)).toContain('<COMPACT-SUMMARY v');
    const call = sent.findIndex((message) => JSON.stringify(message).includes('"id":"c3"'));
    expect(sent[call]?.role).toBe('assistant');
    expect(sent[call + 1]?.role).toBe('tool');
  });
});
