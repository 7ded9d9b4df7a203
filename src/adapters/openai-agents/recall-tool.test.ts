import { Agent, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ABC_TEXT,
  RECALL_CALLS,
  strictInput,
  twoSessionArchive,
} from '../../../test/support/recall-fixtures.js';
import { recallScript } from '../../../test/support/recall-script.js';
import { RECALL_INPUT_SCHEMA_STRICT } from '../../recall/recall-tool.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { recallTool } from './index.js';

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function runAgent(
  calls: Record<string, unknown>[],
  tool: Awaited<ReturnType<typeof recallTool>>,
  context?: unknown,
) {
  const script = recallScript(calls);
  server = await startProviderTestServer({ handler: script.handler });
  setTracingDisabled(true);
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: server.openaiBaseURL }),
  });
  const agent = new Agent({ name: 'coder', instructions: 'Use recall.', tools: [tool], model: 'gpt-4o' });
  const result = await runner.run(agent, 'What was archived?', {
    maxTurns: calls.length + 2,
    ...(context ? { context } : {}),
  });
  return { script, result };
}

describe('recallTool (Agents JS) with the real Runner', () => {
  it('answers each recall of the model, refusals included, from its own session only', async () => {
    const recall = await twoSessionArchive();
    const tool = await recallTool({ recall, sessionId: 'chat-1' });
    const { script, result } = await runAgent(
      RECALL_CALLS.map((call) => strictInput(call.input)),
      tool,
    );
    expect(String(result.finalOutput)).toBe(`Recalled ${RECALL_CALLS.length} results.`);
    const results = script.results();
    expect(results).toHaveLength(RECALL_CALLS.length);
    for (const [k, call] of RECALL_CALLS.entries())
      expect(results[k], JSON.stringify(call.input)).toMatch(call.expect);
    expect(results[0]).toContain(ABC_TEXT.slice(200, 400));
    expect(results.join('\n')).not.toContain('chat-2 launch code');
    const sent = script.sentTool();
    expect(sent).toMatchObject({ name: 'recall', strict: true, parameters: RECALL_INPUT_SCHEMA_STRICT });
  });

  it('takes the session from the run context when none is given', async () => {
    const recall = await twoSessionArchive();
    const tool = await recallTool({ recall });
    const { script } = await runAgent([strictInput({ ref: 'tool-other' })], tool, { sessionId: 'chat-2' });
    expect(script.results()[0]).toContain('chat-2 launch code 0451');
  });
});
