/**
 * Review 80 (a new user's hostile review), the OpenAI Agents SDK: runs whose conversation the
 * server keeps. With `previousResponseId` or `conversationId` the runner hands each model call
 * after the first only what is new (the tool outputs, whose calls the server holds). The input
 * filter took that delta for a broken history and threw `invalid_messages` (orphan tool
 * result) on the second model call of every tool loop; it now passes the delta as it is.
 *
 * And `CompactionSession.getItems(limit)` over a reasoning model's history: a window that
 * began inside a round's calls returned them without the reasoning item before them, which
 * the Responses API refuses ("function_call was provided without its required 'reasoning'
 * item"). Such calls now go with their results.
 *
 * And a `CompactionSession` in a run that stops for a tool approval (`needsApproval`): the
 * session holds the call with no result yet, and the runner's compaction hook (and any
 * `getItems`) threw `invalid_messages` (unanswered tool call): the run itself failed. The open
 * round now goes as it is after the compacted rest.
 */
import {
  Agent,
  type AgentInputItem,
  MemorySession,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CompactionSession, compactionInputFilter } from '../../src/adapters/openai-agents/index.js';
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

/** A reasoning model's rounds as the Agents SDK stores them: reasoning, parallel calls, results. */
function reasoningHistory(rounds: number): AgentInputItem[] {
  const items: AgentInputItem[] = [{ role: 'user', content: 'Probe every host.' } as AgentInputItem];
  for (let r = 0; r < rounds; r++) {
    items.push({
      type: 'reasoning',
      id: `rs_${r}`,
      content: [],
      providerData: { encrypted_content: `enc_${r}` },
    } as AgentInputItem);
    for (const side of ['a', 'b']) {
      items.push({
        type: 'function_call',
        id: `fc_${r}${side}`,
        callId: `call_${r}${side}`,
        name: 'probe',
        arguments: '{}',
        status: 'completed',
      } as AgentInputItem);
    }
    for (const side of ['b', 'a']) {
      items.push({
        type: 'function_call_result',
        callId: `call_${r}${side}`,
        name: 'probe',
        status: 'completed',
        output: `host ${r}${side} up`,
      } as AgentInputItem);
    }
  }
  return items;
}

describe('CompactionSession.getItems(limit) over a reasoning model', () => {
  it('never returns a call without the reasoning item before it', async () => {
    const items = reasoningHistory(4);
    const session = new CompactionSession({ session: new MemorySession(), manager });
    await session.addItems(items);
    for (let limit = 1; limit <= items.length; limit++) {
      const got = (await session.getItems(limit)) as { type?: string; id?: string }[];
      expect(got.length).toBeLessThanOrEqual(limit);
      got.forEach((item, k) => {
        if (item.type !== 'function_call') return;
        let j = k - 1;
        while (got[j]?.type === 'function_call') j--;
        expect(got[j]?.id, `limit ${limit}: ${item.id}`).toBe(`rs_${item.id!.slice(3, -1)}`);
      });
    }
  });
});

describe('CompactionSession in a run that stops for a tool approval', () => {
  it('interrupts, resumes after the approval, and reads its items throughout', async () => {
    const remove = tool({
      name: 'remove',
      description: 'Remove a directory',
      parameters: z.object({ step: z.number() }),
      needsApproval: true,
      execute: async () => 'removed',
    });
    const approving = new Agent({ name: 'ops', instructions: 'Clean up.', tools: [remove], model: 'gpt-4o' });
    await server.close();
    server = await startProviderTestServer({
      handler: reusedIdLoop({ tool: 'remove', steps: 1, idFor: (n, seq) => `call_${seq}_${n}` }),
    });
    runner = new Runner({
      modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: server.openaiBaseURL }),
    });
    const session = new CompactionSession({ session: new MemorySession(), manager });
    const first = await runner.run(approving, 'Remove the temp directory.', session.runOptions());
    expect(first.interruptions).toHaveLength(1);
    // The call waits for its approval: the session reads it back as it is.
    const pending = (await session.getItems()) as { type?: string }[];
    expect(pending.at(-1)?.type).toBe('function_call');
    first.state.approve(first.interruptions[0]!);
    const resumed = await runner.run(approving, first.state, session.runOptions());
    expect(String(resumed.finalOutput)).toContain('Done');
    const items = (await session.getItems()) as { type?: string }[];
    expect(items.map((item) => item.type ?? 'message')).toContain('function_call_result');
  });
});
