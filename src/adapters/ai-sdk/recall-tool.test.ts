import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { ABC_TEXT, RECALL_CALLS, twoSessionArchive } from '../../../test/support/recall-fixtures.js';
import { recallScript } from '../../../test/support/recall-script.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { recallTool } from './index.js';

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('recallTool (AI SDK) with generateText', () => {
  it('answers each recall in a multi-step loop; a refused recall is a tool error the model reads', async () => {
    const recall = await twoSessionArchive();
    const script = recallScript(
      RECALL_CALLS.map((call) => call.input),
      { reuseIds: true },
    );
    server = await startProviderTestServer({ handler: script.handler });
    const provider = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
    const result = await generateText({
      model: provider.chat('gpt-4o'),
      tools: { recall: await recallTool({ recall, sessionId: 'chat-1' }) },
      prompt: 'What was archived?',
      stopWhen: stepCountIs(RECALL_CALLS.length + 2),
    });
    expect(result.text).toBe(`Recalled ${RECALL_CALLS.length} results.`);
    const results = script.results();
    for (const [k, call] of RECALL_CALLS.entries())
      expect(results[k], JSON.stringify(call.input)).toMatch(call.expect);
    expect(results[0]).toContain(ABC_TEXT.slice(200, 400));
    expect(results.join('\n')).not.toContain('chat-2 launch code');
    // The refusals were tool errors, not results.
    const errors = result.steps.flatMap((step) => step.content.filter((part) => part.type === 'tool-error'));
    expect(errors).toHaveLength(
      RECALL_CALLS.filter((call) => /recall error/.test(call.expect.source)).length,
    );
    const sent = script.sentTool() as { function?: { parameters?: { properties?: object } } };
    expect(Object.keys(sent.function?.parameters?.properties ?? {})).toEqual([
      'ref',
      'query',
      'page',
      'page_chars',
      'limit',
    ]);
  });

  it('reads the session from experimental_context when given a function', async () => {
    const recall = await twoSessionArchive();
    const script = recallScript([{ ref: 'tool-other' }]);
    server = await startProviderTestServer({ handler: script.handler });
    const provider = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
    await generateText({
      model: provider.chat('gpt-4o'),
      tools: {
        recall: await recallTool({ recall, sessionId: (context) => (context as { chat: string }).chat }),
      },
      prompt: 'recall',
      experimental_context: { chat: 'chat-2' },
      stopWhen: stepCountIs(3),
    });
    expect(script.results()[0]).toContain('chat-2 launch code 0451');
  });
});
