/**
 * `agent-compaction mcp --archive DIR --session ID`: the recall tool over MCP (stdio), for
 * agents whose host speaks MCP (Claude Desktop, Cursor, the Agents SDK's MCP servers). The
 * server reads the fs archive another process writes; the session is fixed by whoever starts
 * the server, never by the model. `@modelcontextprotocol/sdk` is an optional peer, imported
 * lazily.
 */
import { parseArgs } from 'node:util';
import { CompactError, isCompactError } from '../core/errors.js';
import { RecallArchive } from '../recall/recall-archive.js';
import {
  RECALL_INPUT_SCHEMA,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  runRecallTool,
} from '../recall/recall-tool.js';
import { fsStorage } from '../storage/fs/fs-storage.js';

/** Options of {@link createRecallMcpServer}. */
export interface RecallMcpServerOptions {
  recall: RecallArchive;
  /** The one session this server recalls from. */
  sessionId: string;
}

/** The usage line of the `mcp` command. */
export const MCP_USAGE = `usage: agent-compaction mcp --archive DIR --session ID [--page-chars N]

Serves the recall tool over MCP (stdio) for one session of an fs archive (the directory
given as storage path to the manager, e.g. .compact/archive).`;

async function loadMcp() {
  try {
    const [{ Server }, types] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    return { Server, types };
  } catch (error) {
    throw new CompactError(
      'missing_dependency',
      'install @modelcontextprotocol/sdk: npm i @modelcontextprotocol/sdk',
      { cause: error },
    );
  }
}

/**
 * An MCP server (not yet connected) exposing one `recall` tool for `sessionId`. A refused
 * recall is a tool result with `isError: true`.
 *
 * @example
 * ```ts
 * const server = await createRecallMcpServer({ recall: new RecallArchive(fsStorage(), { refresh: 'list' }), sessionId: 'chat-42' });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export async function createRecallMcpServer(options: RecallMcpServerOptions) {
  const { Server, types } = await loadMcp();
  const server = new Server(
    { name: 'agent-compaction-recall', version: '0.1.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: RECALL_TOOL_NAME,
        description: RECALL_TOOL_DESCRIPTION,
        inputSchema: RECALL_INPUT_SCHEMA as unknown as { type: 'object'; [key: string]: unknown },
      },
    ],
  }));
  server.setRequestHandler(types.CallToolRequestSchema, async (request) => {
    if (request.params.name !== RECALL_TOOL_NAME) {
      return {
        content: [{ type: 'text' as const, text: `unknown tool ${request.params.name}` }],
        isError: true,
      };
    }
    const result = await runRecallTool(options.recall, options.sessionId, request.params.arguments ?? {});
    return {
      content: [{ type: 'text' as const, text: result.text }],
      ...(result.isError ? { isError: true } : {}),
    };
  });
  return server;
}

/** Runs the `mcp` command until stdin closes. Returns the exit code (2 for bad arguments). */
export async function runMcpCommand(
  argv: readonly string[],
  stderr: (text: string) => void,
): Promise<number> {
  let values: { archive?: string; session?: string; 'page-chars'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        archive: { type: 'string' },
        session: { type: 'string' },
        'page-chars': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    stderr(`error: ${(error as Error).message}\n${MCP_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    stderr(`${MCP_USAGE}\n`);
    return 0;
  }
  const problem = !values.archive
    ? '--archive DIR is required'
    : !values.session
      ? '--session ID is required'
      : undefined;
  const pageChars = values['page-chars'] === undefined ? undefined : Number(values['page-chars']);
  if (problem || (pageChars !== undefined && !(Number.isInteger(pageChars) && pageChars >= 100))) {
    stderr(`error: ${problem ?? '--page-chars must be an integer of at least 100'}\n${MCP_USAGE}\n`);
    return 2;
  }
  const recall = new RecallArchive(fsStorage({ path: values.archive! }), {
    refresh: 'list',
    ...(pageChars !== undefined ? { pageChars, maxPageChars: Math.max(pageChars, 20_000) } : {}),
  });
  let server: Awaited<ReturnType<typeof createRecallMcpServer>>;
  try {
    server = await createRecallMcpServer({ recall, sessionId: values.session! });
  } catch (error) {
    // A missing optional peer is one line naming the package to install, not a stack trace.
    if (!isCompactError(error, 'missing_dependency')) throw error;
    stderr(`error: ${error.message}\n`);
    return 2;
  }
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  await closed;
  return 0;
}
