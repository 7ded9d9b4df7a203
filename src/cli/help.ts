import { readFileSync } from 'node:fs';

/** The help of one command: what it does, its usage, an example. */
interface CommandHelp {
  usage: string;
  description: string;
  example: string;
}

/** Every command of the CLI with its help. */
export const COMMAND_HELP: Readonly<Record<string, CommandHelp>> = Object.freeze({
  estimate: {
    usage: 'agent-compaction estimate FILE [--model M] [--max-context N] [--config FILE]',
    description:
      "Counts a request's tokens (system, developer, tool schemas, messages) with the model's tokenizer,\nand its usage of the window (the model's known window unless --max-context is given).",
    example: 'agent-compaction estimate session.json --model gpt-4o',
  },
  compact: {
    usage: `agent-compaction compact FILE --max-context N [--model M] [--format auto|openai-chat|openai-responses|anthropic]
                 [--strategy S] [--keep-recent-turns N] [--keep-tool-io-pairs N] [--trigger-pct X] [--buffer N]
                 [--max-summary-tokens N] [--force] [--report FILE] [--config FILE] [--state FILE] [--session-id ID]`,
    description:
      "Compacts a history once and prints the messages to send, in the input's format. --report FILE writes\nthe CompactionResult; --state FILE keeps the summary version and protected set between runs.",
    example:
      'agent-compaction compact session.json --max-context 32000 --report result.json > compacted.json',
  },
  replay: {
    usage: `agent-compaction replay FILE|DIR [--max-context N] [--model M] [--config FILE] [--out DIR] [--trace FILE]
                 [--strategy S] [--keep-recent-turns N] [--trigger-pct X] [--buffer N] [--json]`,
    description:
      'Runs a recorded transcript (JSON array, JSONL, or an archived session folder) through the preflight call\nby call, as if live, and prints a table of the compactions. Progress goes to stderr. --out DIR archives\nas the library does; --trace FILE writes the JSONL trace that `report` reads; --json prints the compactions as JSON.',
    example: 'agent-compaction replay session.jsonl --max-context 32000 --trace trace.jsonl',
  },
  report: {
    usage: 'agent-compaction report FILE|DIR --out report.html [--max-context N] [--model M] [--config FILE]',
    description:
      'Writes one self-contained HTML page (no network): a chart of context tokens per call with the window,\ntrigger and target lines and a marker per compaction, then a card per compaction (levels, counts, the\nsummary with its changes). FILE is a JSONL trace, or a transcript that is replayed first; DIR an archived session.',
    example: 'agent-compaction report trace.jsonl --out report.html',
  },
  status: {
    usage:
      'agent-compaction status SESSION_DIR [--json]\n  agent-compaction status SESSION_ID --store redis [--redis-url-env NAME] [--json]',
    description:
      'What a session remembers now: the summary, its tokens, the last compaction, errors and the cost.\nSESSION_DIR is a session folder of an fs archive (.compact/archive/<session>); with --store redis, SESSION_ID is read from the shared Redis session store at $REDIS_URL (or the variable --redis-url-env names).',
    example:
      'agent-compaction status .compact/archive/my-session\n  REDIS_URL=redis://localhost:6379 agent-compaction status my-session --store redis',
  },
  mcp: {
    usage: 'agent-compaction mcp --archive DIR --session ID [--page-chars N]',
    description:
      "Serves the recall tool over MCP (stdio) for one session of an fs archive, so an MCP host's model can read back what compaction removed (needs @modelcontextprotocol/sdk).",
    example: 'agent-compaction mcp --archive .compact/archive --session my-session',
  },
});

/** The package version (package.json beside src/ and dist/). */
export function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return String((JSON.parse(text) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

/** The help of the whole CLI: each command's usage and description. */
export function generalHelp(): string {
  const commands = Object.entries(COMMAND_HELP)
    .map(([name, help]) => `  ${name.padEnd(9)}${help.description.split('\n')[0]}`)
    .join('\n');
  const usages = Object.values(COMMAND_HELP)
    .map((help) => `  ${help.usage}`)
    .join('\n');
  return `agent-compaction ${packageVersion()}: keeps agent conversations inside the context window.

Usage:
${usages}

Commands:
${commands}

Run agent-compaction COMMAND --help for its options and an example.
FILE is a JSON array of messages, a JSONL file, or {"messages": [...], "tools"?: [...], "system"?: ...}; "-" reads stdin.
Exit codes: 0 ok, 2 bad input or options, 3 insufficient budget.`;
}

/** The help of one command. */
export function commandHelp(name: string): string | undefined {
  const help = COMMAND_HELP[name];
  if (!help) return undefined;
  return `Usage:\n  ${help.usage}\n\n${help.description}\n\nExample:\n  ${help.example}`;
}
