/**
 * Review 80 (a new user's hostile review), the OpenAI Agents SDK: runs whose conversation the
 * server keeps. With `previousResponseId` or `conversationId` the runner hands each model call
 * after the first only what is new (the tool outputs, whose calls the server holds). The input
 * filter took that delta for a broken history and threw `invalid_messages` (orphan tool
 * result) on the second model call of every tool loop; it now passes the delta as it is.
 */
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compactionInputFilter } from '../../src/adapters/openai-agents/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { reusedIdLoop, toolOutput, WINDOW } from '../support/tool-loop.js';

setTracingDisabled(true);

const STEPS = 4;
let step = 0;
const probe = tool({
  name: 'probe',
  description: 'Probe the hosts',
  parameters: z.object({ step: z.number() }),
  execute: async () => toolOutput(step++),
});
const agent = new Agent({ name: 'sre', instructions: 'Probe every host.', tools: [probe], model: 'gpt-4o' });

let server: ProviderTestServer;
let runner: Runner;
let manager: CompactManager;
beforeEach(async () => {
  server = await startProviderTestServer({
    handler: reusedIdLoop({ tool: 'probe', steps: STEPS, idFor: (n, seq) => `call_${seq}_${n}` }),
  });
  runner = new Runner({
    modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: server.openaiBaseURL }),
  });
  manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
});
afterEach(async () => {
  await manager.shutdown();
  await server.close();
});

describe('compactionInputFilter on a run whose conversation the server keeps', () => {
  it.each([
    ['previousResponseId', { previousResponseId: 'resp_earlier' }],
    ['conversationId', { conversationId: 'conv_42' }],
  ])('%s: every model call goes out, the delta as the runner made it', async (_name, serverManaged) => {
    const result = await runner.run(agent, 'Probe every host, one at a time.', {
      callModelInputFilter: compactionInputFilter(manager, { sessionId: 'server-kept' }),
      maxTurns: STEPS + 3,
      ...serverManaged,
    });
    expect(String(result.finalOutput)).toContain(`Done after ${STEPS}`);
    expect(server.requests).toHaveLength(STEPS + 1);
    // After the first call, each request holds the new tool output alone, unchanged.
    for (const request of server.requests.slice(1)) {
      const input = (request.body as { input: { type?: string; output?: unknown }[] }).input;
      expect(input.map((item) => item.type)).toEqual(['function_call_output']);
    }
  });
});
