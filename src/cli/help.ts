import { readFileSync } from 'node:fs';

/** The help of one command: what it does, its usage, its flags, an example. */
interface CommandHelp {
  /** One sentence for the command list of `--help`. */
  summary: string;
  usage: string;
  description: string;
  /** The flags the command reads, each with what it does. */
  flags: Readonly<Record<string, string>>;
  example: string;
}

/** The flags that set the compaction policy, shared by compact, replay and report. */
const POLICY_FLAGS = {
  '--max-context N': "the model's context window in tokens (default: the known window of --model)",
  '--model M': 'the model whose tokenizer counts and whose window applies (default gpt-4o)',
  '--config FILE':
    'the config file (YAML, JSON, or .js/.mjs with a default export); else the file $COMPACT_CONFIG names; else ./compact.yaml, ./compact.yml, ./compact.json or ./compact.config.{yaml,yml,json,js,mjs}. COMPACT_* variables apply over it',
  '--strategy S': 'summary strategy: task_state (default), brief, decision_log or code_delta',
  '--keep-recent-turns N': 'user turns kept verbatim at the end (default 6)',
  '--keep-tool-io-pairs N': 'recent tool call/result pairs kept whole (default 4)',
  '--trigger-pct X': 'compact when the request passes this fraction of the window (default 0.85)',
  '--buffer N': 'tokens kept free below the window for the reply (default 1500)',
  '--max-summary-tokens N': 'largest summary in tokens (default 1024)',
} as const;

/** Every command of the CLI with its help. */
export const COMMAND_HELP: Readonly<Record<string, CommandHelp>> = Object.freeze({
  estimate: {
    summary: "Counts a request's tokens and its share of the window.",
    usage: 'agent-compaction estimate FILE [--model M] [--max-context N] [--format F] [--config FILE]',
    description:
      "Counts a request's tokens (system, developer, tool schemas, messages) with the model's tokenizer,\nand its usage of the window (the model's known window unless --max-context is given). Prints JSON.",
    flags: {
      '--model M': POLICY_FLAGS['--model M'],
      '--max-context N': POLICY_FLAGS['--max-context N'],
      '--format F': 'auto (default), openai-chat, openai-responses or anthropic',
      '--config FILE': POLICY_FLAGS['--config FILE'],
    },
    example: 'agent-compaction estimate session.json --model gpt-4o',
  },
  compact: {
    summary: 'Compacts a history once and prints what to send, in the shape it came in.',
    usage: `agent-compaction compact FILE --max-context N [--model M] [--format F] [--strategy S]
                 [--keep-recent-turns N] [--keep-tool-io-pairs N] [--trigger-pct X] [--buffer N]
                 [--max-summary-tokens N] [--force] [--report FILE] [--config FILE] [--state FILE] [--session-id ID]`,
    description:
      'Compacts a history once and prints the messages to send, in the input\'s format and shape: a JSON array\nstays an array, {"system", "messages", "tools"} comes back with the same keys. Below the trigger the\nmessages come back unchanged unless --force is given.',
    flags: {
      ...POLICY_FLAGS,
      '--format F': 'auto (default), openai-chat, openai-responses or anthropic',
      '--force': 'compact even below the trigger',
      '--report FILE': 'write the CompactionResult (levels, counts, summary, events) as JSON',
      '--state FILE': 'keep the summary version and protected set in FILE between runs',
      '--session-id ID': 'the session id of events and state (default cli)',
    },
    example:
      'agent-compaction compact session.json --max-context 32000 --report result.json > compacted.json',
  },
  replay: {
    summary: 'Replays a recorded transcript call by call and prints a table of the compactions.',
    usage: `agent-compaction replay FILE|DIR [--max-context N] [--model M] [--config FILE] [--out DIR] [--trace FILE]
                 [--strategy S] [--keep-recent-turns N] [--keep-tool-io-pairs N] [--trigger-pct X] [--buffer N]
                 [--max-summary-tokens N] [--session-id ID] [--json]`,
    description:
      'Runs a recorded transcript (JSON array, JSONL, or an archived session folder) through the preflight\ncall by call, as if live, and prints a table of the compactions. Progress goes to stderr.',
    flags: {
      ...POLICY_FLAGS,
      '--out DIR': 'archive the session in DIR as the library does (status and report read it)',
      '--trace FILE': 'write the JSONL trace that report reads',
      '--session-id ID': 'the session id (default replay): the archive folder is DIR/ID',
      '--json': 'print the compactions as JSON instead of the table',
    },
    example: 'agent-compaction replay session.jsonl --max-context 32000 --trace trace.jsonl',
  },
  report: {
    summary: 'Writes a self-contained HTML page of a session: chart, compactions, summaries.',
    usage: `agent-compaction report FILE|DIR --out report.html [--max-context N] [--model M] [--config FILE] [--trace FILE]
                 [--strategy S] [--keep-recent-turns N] [--keep-tool-io-pairs N] [--trigger-pct X] [--buffer N]
                 [--max-summary-tokens N] [--session-id ID]`,
    description:
      'Writes one self-contained HTML page (no network): a chart of context tokens per call with the window,\ntrigger and target lines and a marker per compaction, then a card per compaction (levels, counts, the\nsummary with its changes). FILE is a JSONL trace, or a transcript that is replayed first; DIR an\narchived session.',
    flags: {
      '--out FILE': 'the HTML page to write (required)',
      ...POLICY_FLAGS,
      '--trace FILE': 'when a transcript is replayed, also write its JSONL trace',
      '--session-id ID': 'the session id of a replayed transcript (default replay)',
    },
    example: 'agent-compaction report trace.jsonl --out report.html',
  },
  status: {
    summary: 'Shows what an archived session remembers now: summary, last compaction, cost.',
    usage:
      'agent-compaction status SESSION_DIR [--json]\n  agent-compaction status SESSION_ID --store redis [--redis-url-env NAME] [--queue NAME] [--json]',
    description:
      'What a session remembers now: the summary, its tokens, the last compaction, errors and the cost.\nSESSION_DIR is a session folder of an fs archive (.compact/archive/<session>); with --store redis,\nSESSION_ID is read from the shared Redis session store at $REDIS_URL (or the variable --redis-url-env names),\nwith the jobs of the preparation queue (waiting, active, failed) and its lag (needs bullmq and ioredis).',
    flags: {
      '--json': 'print the status as JSON',
      '--store redis': 'read SESSION_ID from a Redis session store instead of an archive folder',
      '--redis-url-env NAME': 'the environment variable holding the Redis URL (default REDIS_URL)',
      '--queue NAME': 'with --store redis: the preparation queue shown (default agent-compaction-prepare)',
    },
    example:
      'agent-compaction status .compact/archive/my-session\n  REDIS_URL=redis://localhost:6379 agent-compaction status my-session --store redis',
  },
  worker: {
    summary: 'Runs a worker of the summary preparation queue until stopped (SIGINT or SIGTERM).',
    usage: 'agent-compaction worker [--config FILE] [--json]',
    description:
      "Runs a worker of the BullMQ summary preparation queue (the config's queue section, on the Redis of\n$REDIS_URL or queue.redis_url_env): it summarizes the jobs agents enqueue with the configured summarizer\nand publishes each summary in the Redis session store (needs bullmq and ioredis). One line per job.",
    flags: {
      '--config FILE':
        'the config with queue, sessions.store: redis and the summarizer (else $COMPACT_CONFIG, else ./compact.yaml and the other names of compact --help); one is required',
      '--json': 'print each job run as one JSON line',
    },
    example: 'agent-compaction worker --config compact.yaml   (with REDIS_URL=redis://localhost:6379)',
  },
  proxy: {
    summary: 'Runs an HTTP proxy that compacts every request on its way to a provider.',
    usage: `agent-compaction proxy --upstream URL [--port N] [--host H] [--config FILE] [--model M]
                 [--max-context N] [--max-body BYTES] [--quiet] [--json]`,
    description:
      "Serves OpenAI Chat Completions (/v1/chat/completions), OpenAI Responses (/v1/responses) and Anthropic\nMessages (/v1/messages) on 127.0.0.1: each request is compacted (sessions from the x-compaction-session\nheader, else from the history's opening), forwarded to --upstream with the client's own key, and the answer\nstreamed back unchanged. Needs hono and @hono/node-server. See docs/proxy.md.",
    flags: {
      '--upstream URL':
        'the provider, fixed for every request (https://api.anthropic.com, https://api.openai.com/v1)',
      '--port N': 'the port (default 8787; 0 for a free one)',
      '--host H': 'the address bound (default 127.0.0.1: this machine only)',
      '--config FILE': POLICY_FLAGS['--config FILE'],
      '--model M': POLICY_FLAGS['--model M'],
      '--max-context N': POLICY_FLAGS['--max-context N'],
      '--max-body BYTES': 'the largest request body read; larger ones get 413 (default 33554432)',
      '--quiet': 'no line per request on stderr',
      '--json': 'print the address and each request line as JSON',
    },
    example: 'agent-compaction proxy --upstream https://api.anthropic.com --max-context 200000',
  },
  mcp: {
    summary: 'Serves the recall tool over MCP (stdio) for one session of an fs archive.',
    usage: 'agent-compaction mcp --archive DIR --session ID [--page-chars N] [--config FILE]',
    description:
      "Serves the recall tool over MCP (stdio) for one session of an fs archive, so an MCP host's model can\nread back what compaction removed (needs @modelcontextprotocol/sdk). Exits when stdin closes.",
    flags: {
      '--archive DIR': 'the fs archive folder (the storage path given to the manager); must exist',
      '--session ID': 'the one session this server recalls from',
      '--page-chars N': 'characters per recalled page (at least 100)',
      '--config FILE':
        'the config whose storage.hash_session_ids names the session folders (else $COMPACT_CONFIG, else ./compact.yaml and the other names of compact --help)',
    },
    example: 'agent-compaction mcp --archive .compact/archive --session my-session',
  },
});

/** The flag names (`--out`) a command reads, from its help; `--help` and `--version` always. */
export function commandFlags(command: string): string[] {
  const help = COMMAND_HELP[command];
  const names = Object.keys(help?.flags ?? {}).map((flag) => flag.split(' ')[0]!);
  return [...new Set([...names, '--help', '--version'])];
}

/** The package version (package.json beside src/ and dist/). */
export function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return String((JSON.parse(text) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

/** The help of the whole CLI: each command's usage and one-line summary. */
export function generalHelp(): string {
  const commands = Object.entries(COMMAND_HELP)
    .map(([name, help]) => `  ${name.padEnd(10)}${help.summary}`)
    .join('\n');
  const usages = Object.values(COMMAND_HELP)
    .map((help) => `  ${help.usage}`)
    .join('\n');
  return `agent-compaction ${packageVersion()}: keeps agent conversations inside the context window.

Usage:
${usages}

Commands:
${commands}

The usages show the main flags; agent-compaction COMMAND --help lists every flag of COMMAND (the policy
flags of compact, replay and report too) with an example. --version prints the version.
FILE is a JSON array of messages, a JSONL file, {"messages": [...], "tools"?: [...], "system"?: ...}, or a Responses
body {"input": [...], "instructions"?: ..., "tools"?: [...]}; "-" reads stdin.
Exit codes: 0 ok, 2 bad input, options or files, 3 a budget that cannot be met.`;
}

/** The help of one command: usage, description, flags, example. */
export function commandHelp(name: string): string | undefined {
  const help = COMMAND_HELP[name];
  if (!help) return undefined;
  const width = Math.max(...Object.keys(help.flags).map((flag) => flag.length)) + 2;
  const flags = Object.entries(help.flags)
    .map(([flag, text]) => `  ${flag.padEnd(width)}${text}`)
    .join('\n');
  return `Usage:\n  ${help.usage}\n\n${help.description}\n\nFlags:\n${flags}\n\nExample:\n  ${help.example}`;
}
