/**
 * The tools of an agent's MCP servers go to the model with every request, as function tools the
 * SDK lists at run time, not in `agent.tools`. The input filter counted `agent.tools` only, so an
 * agent with a real MCP catalog (40 tools of about 250 tokens) sent requests past the window:
 * the filter believed the request ~10,000 tokens smaller than it was. Now the filter lists the
 * agent's MCP tools as the runner does (cached when the server caches its list) and counts them.
 * Real Agents SDK, a real MCP server over stdio, the loopback provider; checkSoundRequest judges.
 */
import { fileURLToPath } from 'node:url';
import { Agent, MCPServerStdio, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { checkSoundRequest } from '../../testing/assert-sound-request.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { compactionInputFilter } from './index.js';

const WINDOW = 16_000;
const REPLY = 500;
const SCRIPT = fileURLToPath(new URL('../../../test/support/wide-mcp-server.mjs', import.meta.url));

let server: ProviderTestServer;
let mcp: MCPServerStdio;

beforeAll(async () => {
  setTracingDisabled(true);
  server = await startProviderTestServer({ handler: () => ({ text: 'Noted.' }) });
  // The SDK gives the server's start and each request 5 s by default: on a busy machine the
  // child's start alone took longer (beforeAll timed out twice at load 11-15). Wait for it.
  mcp = new MCPServerStdio({
    name: 'wide',
    command: process.execPath,
    args: [SCRIPT],
    cacheToolsList: true,
    clientSessionTimeoutSeconds: 600,
  });
  await mcp.connect();
});

afterAll(async () => {
  await mcp.close();
  await server.close();
});

describe('compactionInputFilter with MCP servers', () => {
  it("counts the MCP servers' tools: every request fits the window", async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: `${server.url}/v1` }),
    });
    const agent = new Agent({
      name: 'ops',
      instructions: 'Answer from the catalog.',
      mcpServers: [mcp],
      model: 'gpt-4o',
      modelSettings: { maxTokens: REPLY },
    });
    let history: unknown[] = [];
    for (let k = 0; k < 8; k++) {
      const note = Array.from({ length: 700 }, (_, i) => `note${k}-${i % 89}`).join(' ');
      const result = await runner.run(
        agent,
        [...(history as never[]), { role: 'user', content: `Record this, part ${k}: ${note}` }],
        { callModelInputFilter: compactionInputFilter(manager, { sessionId: 'mcp' }) },
      );
      history = result.history;
    }
    expect(server.requests.length).toBe(8);
    // The tools sent are the MCP catalog: they are what the filter must count.
    expect((server.requests[0]!.body as { tools: unknown[] }).tools).toHaveLength(40);
    for (const request of server.requests) {
      expect(checkSoundRequest({ request: request.body, maxContextTokens: WINDOW })).toEqual([]);
    }
    await manager.shutdown();
  });
});
