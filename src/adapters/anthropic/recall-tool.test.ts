import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { ABC_TEXT, RECALL_CALLS, twoSessionArchive } from '../../../test/support/recall-fixtures.js';
import { recallScript } from '../../../test/support/recall-script.js';
import { RECALL_INPUT_SCHEMA } from '../../recall/recall-tool.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { recallToolDefinition } from './index.js';

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('recallToolDefinition (Anthropic SDK)', () => {
  it('runs in a hand-written tool loop: results for good calls, is_error for refused ones', async () => {
    const recall = await twoSessionArchive();
    const script = recallScript(RECALL_CALLS.map((call) => call.input));
    server = await startProviderTestServer({ handler: script.handler });
    const anthropic = new Anthropic({ apiKey: 'test-key', baseURL: server.anthropicBaseURL, maxRetries: 0 });
    const recaller = recallToolDefinition({ recall, sessionId: 'chat-1' });
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'What was archived?' }];
    for (let turn = 0; turn < RECALL_CALLS.length + 2; turn++) {
      const reply = await anthropic.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 1024,
        messages,
        tools: [recaller.tool as unknown as Anthropic.Tool],
      });
      messages.push({ role: 'assistant', content: reply.content });
      const uses = reply.content.filter((block) => recaller.handles(block));
      if (uses.length === 0) break;
      messages.push({
        role: 'user',
        content: await Promise.all(uses.map((block) => recaller.handle(block))),
      });
    }
    const results = script.results();
    for (const [k, call] of RECALL_CALLS.entries())
      expect(results[k], JSON.stringify(call.input)).toMatch(call.expect);
    expect(results[0]).toContain(ABC_TEXT.slice(200, 400));
    expect(results.join('\n')).not.toContain('chat-2 launch code');
    const last = server.requests.at(-1)!.body as { messages: { content: unknown }[]; tools: unknown[] };
    const blocks = last.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])) as {
      type: string;
      is_error?: boolean;
    }[];
    const toolResults = blocks.filter((block) => block.type === 'tool_result');
    expect(toolResults.map((block) => block.is_error === true)).toEqual(
      RECALL_CALLS.map((call) => /recall error/.test(call.expect.source)),
    );
    expect(last.tools).toEqual([
      { name: 'recall', description: expect.any(String), input_schema: RECALL_INPUT_SCHEMA },
    ]);
  });

  it('handles only its own tool_use blocks and needs a session id', async () => {
    const recaller = recallToolDefinition({
      recall: await twoSessionArchive(),
      sessionId: 'chat-1',
      name: 'archive_recall',
    });
    expect(recaller.tool.name).toBe('archive_recall');
    expect(recaller.handles({ type: 'tool_use', id: 't1', name: 'archive_recall', input: {} })).toBe(true);
    expect(recaller.handles({ type: 'tool_use', id: 't1', name: 'recall', input: {} })).toBe(false);
    expect(recaller.handles({ type: 'text', text: 'archive_recall' })).toBe(false);
    expect(recaller.handles(null)).toBe(false);
    expect(() => recallToolDefinition({ recall: undefined as never, sessionId: '' })).toThrow(/sessionId/);
  });
});
