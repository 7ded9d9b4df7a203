/**
 * A reasoning model over the Responses API through LangChain: each AI message goes back with its
 * reasoning item and that item's `encrypted_content` (in `response_metadata.output`, or
 * `additional_kwargs.reasoning`). The conversion counted the message's text and calls only, so
 * a tool loop whose replies carry 4,000-character payloads (about 750 tokens each) passed the
 * window. Real LangChain createAgent and ChatOpenAI over the loopback server; every request
 * judged by checkSoundRequest.
 */
import { ChatOpenAI } from '@langchain/openai';
import { createAgent, tool } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { checkSoundRequest } from '../../testing/assert-sound-request.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { responsesBody } from '../../testing/provider-wire/openai-responses.js';
import { compactionMiddleware } from './index.js';

const WINDOW = 16_000;
const REPLY = 500;
const STEPS = 24;

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const probe = tool(async ({ step }: { step: number }) => `host ${step} is up`, {
  name: 'probe',
  description: 'Probe the next host',
  schema: z.object({ step: z.number() }),
});

describe('LangChain over the Responses API, encrypted reasoning', () => {
  it('counts each reply’s encrypted reasoning: every request fits the window', async () => {
    let replies = 0;
    server = await startProviderTestServer({
      // Counted here, not from the input: compaction folds old outputs into the summary.
      handler: (request) => {
        const step = replies++;
        if (step >= STEPS) return { text: 'All hosts are up.' };
        const body = responsesBody({ toolCalls: [{ name: 'probe', arguments: { step } }] }, request);
        const reasoning = {
          type: 'reasoning',
          id: `rs_${request.seq}`,
          summary: [],
          encrypted_content: `gAAA${step}`.padEnd(4_000, 'QUJD'),
        };
        return { json: { ...body, output: [reasoning, ...(body.output as unknown[])] } };
      },
    });
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    const agent = createAgent({
      model: new ChatOpenAI({
        model: 'gpt-4o',
        apiKey: 'test-key',
        maxRetries: 0,
        maxTokens: REPLY,
        useResponsesApi: true,
        configuration: { baseURL: `${server.url}/v1` },
      }),
      tools: [probe],
      middleware: [compactionMiddleware(manager, { sessionId: 'reasoning' })],
    });
    await agent.invoke(
      { messages: [{ role: 'user', content: 'Probe every host.' }] },
      { recursionLimit: 200 },
    );
    expect(server.requests.length).toBe(STEPS + 1);
    // The payloads do travel back: what the manager must count.
    expect(JSON.stringify(server.requests.at(-1)!.body)).toContain(`gAAA${STEPS - 1}Q`);
    for (const request of server.requests) {
      expect(checkSoundRequest({ request: request.body, maxContextTokens: WINDOW })).toEqual([]);
    }
    await manager.shutdown();
  });
});
