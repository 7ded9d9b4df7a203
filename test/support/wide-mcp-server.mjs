// An MCP server over stdio with many tools whose schemas are long (a real server's catalog:
// 40 tools of about 200 tokens each), for the Agents SDK filter's count of MCP tools.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const TOOLS = Number(process.env.WIDE_MCP_TOOLS ?? 40);
const words = (seed) => Array.from({ length: 40 }, (_, i) => `${seed}${i % 37}`).join(' ');
const tools = Array.from({ length: TOOLS }, (_, k) => ({
  name: `catalog_tool_${k}`,
  description: `Tool ${k} of the catalog. ${words('d')}`,
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string', description: words('q') } },
    required: ['query'],
  },
}));

const server = new Server({ name: 'wide', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
await server.connect(new StdioServerTransport());
