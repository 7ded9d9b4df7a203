import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { openaiSummarizer } from '../../src/summarizers/openai/openai-summarizer.js';
import { useProviderTestServer } from '../fixtures/summarizers/use-provider-test-server.js';
import { leakFinder, oneOfEachKind } from './support/secret-shapes.js';

/**
 * The LLM summarizer's transcript prints each tool call's name and id and each result's call
 * id (`-> call name(arguments) [id]`, `<- result [id]: ...`). Those are the caller's strings
 * like the arguments: a tool named or a call id made from a token (an MCP server's tool
 * `search_<key>`, a call id a framework builds from a request token) went to the summarizer's
 * provider as written, while its arguments were redacted.
 */

const startServer = useProviderTestServer();
const FILL = 'the deploy script reads the environment and rolls back on failure. '.repeat(12);

describe('the summarizer wire: tool names and call ids', () => {
  it('carries no secret of a tool name, a call id or a result call id', async () => {
    const server = await startServer({
      handler: () => ({ text: '## Goals\n- deploy', usage: { inputTokens: 10, outputTokens: 5 } }),
    });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test', maxRetries: 0 });
    const [openai, , , , github] = oneOfEachKind(910);
    const find = leakFinder([openai!, github!]);
    const callId = `call_${github!.text}`;
    const history = [
      { role: 'user', content: 'deploy the service' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: callId,
            type: 'function',
            function: { name: `search_${openai!.text}`, arguments: '{"query":"deploy"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: callId, content: `found 3 results. ${FILL}` },
      { role: 'assistant', content: `Deployed. ${FILL}` },
      { role: 'user', content: 'thanks' },
    ];
    // The test can fail: both secrets are in the input.
    expect(find(JSON.stringify(history)).length).toBeGreaterThanOrEqual(2);
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 6000,
      summarizer: openaiSummarizer({ model: 'gpt-4o-mini', client, maxRetries: 0 }),
    });
    await manager.manualCompact('call-ids', history);
    await manager.shutdown();

    expect(server.requests.length).toBe(1);
    const wire = server.requests[0]!.rawBody;
    expect(wire).toContain('-> call search_');
    expect(wire).toContain('found 3 results');
    expect(find(wire)).toEqual([]);
  });
});
