/**
 * `agent-compaction mcp --archive DIR --session ID`: the recall tool over MCP (stdio), for
 * agents whose host speaks MCP (Claude Desktop, Cursor, the Agents SDK's MCP servers). The
 * server reads the fs archive another process writes; the session is fixed by whoever starts
 * the server, never by the model. `@modelcontextprotocol/sdk` is an optional peer, imported
 * lazily.
 */
import { stat } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { CompactError, isCompactError } from '../core/errors.js';
import { RecallArchive } from '../recall/recall-archive.js';
import {
  RECALL_INPUT_SCHEMA,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  runRecallTool,
} from '../recall/recall-tool.js';
import { fsStorage } from '../storage/fs/fs-storage.js';
import { configFileFor } from './find-config-file.js';
import { commandFlags, packageVersion } from './help.js';
import { checkFlags, type FlagOptions, type ParsedArgs, parseCliArgs } from './parse-cli-args.js';
import { terminalText } from './terminal-text.js';

/** Options of {@link createRecallMcpServer}. */
export interface RecallMcpServerOptions {
  recall: RecallArchive;
  /** The one session this server recalls from. */
  sessionId: string;
}

/** The usage line of the `mcp` command. */
export const MCP_USAGE = `usage: agent-compaction mcp --archive DIR --session ID [--page-chars N] [--config FILE]

Serves the recall tool over MCP (stdio) for one session of an fs archive (the directory
given as storage path to the manager, e.g. .compact/archive). The config (--config FILE, else
$COMPACT_CONFIG, else ./compact.yaml ...) and COMPACT_HASH_SESSION_FOLDERS say whether the
session folders are named by a keyed hash (storage.hash_session_ids).`;

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
    { name: 'agent-compaction-recall', version: packageVersion() },
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

/** The `mcp` command's flags, as `parseArgs` options. */
const MCP_OPTIONS: FlagOptions = {
  archive: { type: 'string' },
  session: { type: 'string' },
  'page-chars': { type: 'string' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

/**
 * Whether the archive names session folders by a keyed hash (`storage.hash_session_ids` of the
 * config, or `COMPACT_HASH_SESSION_FOLDERS`): read as the manager that wrote it reads it, else
 * a hashed archive would answer every recall with nothing. The config module loads only when
 * there is a config file or a `COMPACT_*` variable.
 */
async function hashedSessionFolders(
  flag: string | undefined,
  env: Record<string, string | undefined>,
): Promise<boolean> {
  const file = configFileFor(flag, env, process.cwd());
  if (file === undefined && (env.COMPACT_HASH_SESSION_FOLDERS ?? '') === '') return false;
  const { loadConfig } = await import('../config/index.js');
  const config = await loadConfig({ ...(file !== undefined ? { file } : {}), env });
  return config.storage.hash_session_ids;
}

/** The recall archive the `mcp` flags name: the folder must exist (a typo would answer nothing). */
async function recallFromFlags(values: ParsedArgs['values']): Promise<RecallArchive> {
  const archive = values.archive;
  const session = values.session;
  if (typeof archive !== 'string' || archive === '')
    throw new CompactError('invalid_config', '--archive DIR is required (see agent-compaction mcp --help)');
  if (typeof session !== 'string' || session === '')
    throw new CompactError('invalid_config', '--session ID is required (see agent-compaction mcp --help)');
  const raw = values['page-chars'];
  const pageChars = raw === undefined ? undefined : Number(raw);
  if (pageChars !== undefined && !(Number.isInteger(pageChars) && pageChars >= 100))
    throw new CompactError(
      'invalid_config',
      `--page-chars must be an integer of at least 100 (got ${String(raw)})`,
    );
  const info = await stat(archive).catch(() => undefined);
  if (!info?.isDirectory())
    throw new CompactError(
      'invalid_config',
      `--archive ${archive}: ${info ? 'is not a folder' : 'no such folder'} (the storage path the manager archives to, e.g. .compact/archive)`,
    );
  const hashSessionIds = await hashedSessionFolders(values.config as string | undefined, process.env);
  return new RecallArchive(fsStorage({ path: archive, hashSessionIds }), {
    refresh: 'list',
    ...(pageChars !== undefined ? { pageChars, maxPageChars: Math.max(pageChars, 20_000) } : {}),
  });
}

/**
 * Runs the `mcp` command until stdin closes or stdout breaks (then exit code 0). Bad flags, a missing archive
 * folder or a missing MCP SDK are one line on stderr and exit code 2.
 */
export async function runMcpCommand(
  argv: readonly string[],
  stderr: (text: string) => void,
  stdin: NodeJS.ReadableStream = process.stdin,
  stdout: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  let server: Awaited<ReturnType<typeof createRecallMcpServer>>;
  try {
    checkFlags(argv, commandFlags('mcp'), 'mcp');
    const { values } = parseCliArgs(argv, MCP_OPTIONS);
    if (values.help) {
      stderr(`${MCP_USAGE}\n`);
      return 0;
    }
    const recall = await recallFromFlags(values);
    server = await createRecallMcpServer({ recall, sessionId: values.session as string });
  } catch (error) {
    // Bad flags and a missing optional peer are one line, not a stack trace.
    if (!isCompactError(error)) throw error;
    stderr(`error: ${terminalText(error.message)}\n`);
    return 2;
  }
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  // The stdio transport notices neither the end of stdin nor a broken stdout: the host closing
  // either pipe ends the server (an answer written to a closed stdout is an EPIPE `error` event,
  // which without a listener would kill the process with a stack trace).
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    stdin.once('end', resolve);
    stdin.once('close', resolve);
    stdout.on('error', () => resolve());
  });
  await server.connect(new StdioServerTransport(stdin as Readable, stdout as Writable));
  await closed;
  await server.close();
  return 0;
}
