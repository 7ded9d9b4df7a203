/**
 * Issue 34: LangChain.js `createAgent` with `compactionMiddleware`, an 8,000-token window and
 * file reads of about 1,500 tokens each (19% of the window), 61 model calls over the loopback
 * OpenAI server. Before issue 34 this compacted on 58 of 61 calls (v1 to v58, every compaction
 * ending near 5,700 tokens against a 4,000 target); now each compaction reaches its target
 * and the next one waits for the growth it needs.
 */
import { ChatOpenAI } from '@langchain/openai';
import { createAgent, tool } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { reusedIdLoop } from '../../../test/support/tool-loop.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { readRequest, requestTokens } from '../../testing/agent-model-script.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { compactionMiddleware } from './index.js';

const WINDOW = 8_000;
const CALLS = 60;

/** A file of about 1,500 tokens, distinct per read. */
function fileOf(n: number): string {
  return Array.from({ length: 125 }, (_, k) => `line${n}_${k} = compute(${k}, "billing")`).join('\n');
}

let read = 0;
const readFile = tool(async () => fileOf(read++), {
  name: 'read_file',
  description: 'Read the next file of the repository',
  schema: z.object({ step: z.number() }),
});

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  read = 0;
});

describe('LangChain createAgent with file reads of 19% of an 8k window (issue 34)', () => {
  it('compacts at the rhythm growth needs, every compaction at or under its target', async () => {
    server = await startProviderTestServer({
      handler: reusedIdLoop({ tool: 'read_file', steps: CALLS, idFor: (n) => `call_${n}` }),
    });
    const model = new ChatOpenAI({
      model: 'gpt-4o',
      apiKey: 'test-key',
      maxRetries: 0,
      configuration: { baseURL: server.openaiBaseURL },
    });
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    const after: number[] = [];
    const agent = createAgent({
      model,
      tools: [readFile],
      systemPrompt: 'You are a coding agent.',
      middleware: [
        compactionMiddleware(manager, {
          sessionId: 'rhythm',
          onCompaction: (result) => {
            if (result.applied) after.push(result.tokensAfter);
          },
        }),
      ],
    });
    await agent.invoke(
      { messages: [{ role: 'user', content: 'Read every file.' }] },
      { recursionLimit: 500 },
    );
    const requests = server.requests;
    expect(requests).toHaveLength(CALLS + 1);
    const sizes = requests.map((request) => requestTokens(manager, readRequest(request)));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(WINDOW);
    const target = manager.policy.targetPct * WINDOW;
    // Each compaction absorbs trigger minus target; the loop grows ~1,500 tokens a call.
    const perCall = manager.estimate([{ role: 'tool', tool_call_id: 'call_0', content: fileOf(0) }]).total;
    const needed = (CALLS * perCall) / ((manager.policy.triggerPct - manager.policy.targetPct) * WINDOW);
    console.log(
      `LangChain createAgent, ${CALLS + 1} calls, 8k window, ${perCall}-token reads: ${after.length} compactions (growth needs ~${needed.toFixed(1)}), ends ${Math.min(...after)}-${Math.max(...after)} tokens against a ${target} target`,
    );
    expect(after.length).toBeGreaterThan(0);
    expect(after.length).toBeLessThanOrEqual(Math.ceil(1.2 * needed) + 1);
    expect(after.filter((tokens) => tokens > target).length).toBeLessThanOrEqual(
      Math.floor(after.length / 10),
    );
  });
});
