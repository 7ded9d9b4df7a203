/**
 * Review 84d: Anthropic's server tools (web search, web fetch, code execution, the MCP
 * connector) run inside the assistant turn: `server_tool_use` and its `web_search_tool_result`
 * sit in the same assistant message. The codec read them as a call and a result, and the pairing
 * (a result answers a call of an earlier model turn) took the result for an orphan: every
 * `messages.create` through `withCompaction` of an agent that had searched the web once threw
 * `invalid_messages` ("answers call srvtoolu_0, which no call of its round made"), from the
 * first request on. They are now the turn's own text, sent back as they came.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { compactThreadHistory, withCompaction } from '../../src/adapters/anthropic/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { anthropicProblems } from '../support/provider-rules.js';
import { outputOf } from '../support/sound-paths.js';

const WINDOW = 8_000;
const ROUNDS = 40;

/** Round `n`: a web search the server ran, then a client tool call and its result. */
function history(): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [
    { role: 'user', content: 'Audit every host; search the web first.' },
  ];
  for (let n = 0; n < ROUNDS; n++) {
    messages.push({
      role: 'assistant',
      content: [
        {
          type: 'server_tool_use',
          id: `srvtoolu_${n}`,
          name: 'web_search',
          input: { query: `host ${n} cve` },
        },
        {
          type: 'web_search_tool_result',
          tool_use_id: `srvtoolu_${n}`,
          content: [
            {
              type: 'web_search_result',
              url: `https://example.com/${n}`,
              title: `Advisory ${n}`,
              encrypted_content: `enc-${n}-${'x'.repeat(200)}`,
              page_age: null,
            },
          ],
        },
        { type: 'text', text: `Found advisory ${n}; probing.` },
        {
          type: 'tool_use',
          id: `toolu_${n}`,
          name: 'probe',
          input: { host: n, note: n % 4 === 1 ? outputOf(`note${n}`, 900) : '' },
        },
      ],
    });
    messages.push({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: `toolu_${n}`, content: outputOf(`out${n}`, 200 + (n % 5) * 400) },
      ],
    });
  }
  return messages;
}

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('Anthropic server tool blocks in the assistant turn', () => {
  it('withCompaction sends every step, every cascade level, each request one the API accepts', async () => {
    server = await startProviderTestServer({ handler: () => ({ text: 'ok' }) });
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: WINDOW });
    const levels = new Set<string>();
    manager.on('compact.reduction', (event) => levels.add(event.properties.level));
    const client = withCompaction(
      new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 }),
      manager,
      {
        sessionId: 'server-tools',
      },
    );
    const all = history();
    const problems: string[] = [];
    for (let cut = 3; cut <= all.length; cut += 2) {
      const messages = all.slice(0, cut);
      const before = server.requests.length;
      await client.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 1000,
        messages: messages as unknown as Anthropic.MessageParam[],
      });
      for (const request of server.requests.slice(before))
        problems.push(...anthropicProblems(request.body, messages).map((problem) => `${cut}: ${problem}`));
    }
    await manager.shutdown();
    expect(problems).toEqual([]);
    expect([...levels].sort()).toEqual([
      'clear_tool_results',
      'cut_oversized',
      'shorten_arguments',
      'summarize',
    ]);
  });

  it('a turn that paused on its server tool (pause_turn) goes back as it is', async () => {
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: WINDOW });
    const paused = {
      role: 'assistant',
      content: [{ type: 'server_tool_use', id: 'srvtoolu_p', name: 'web_search', input: { query: 'x' } }],
    };
    const { messages } = await compactThreadHistory({
      manager,
      sessionId: 'paused',
      threadHistory: [{ role: 'user', content: 'Search.' }, paused] as never,
    });
    await manager.shutdown();
    expect(messages.at(-1)).toEqual(paused);
  });
});
