import { format as formatText } from 'node:util';
import { CompactError, isCompactError } from '../core/errors.js';
import { type CompactManagerOptions, MIN_CONTEXT_TOKENS } from '../core/manager/manager-options.js';
import type { MessageFormat } from '../core/messages/message.js';
import type { CompactPolicy } from '../core/policy.js';
import type { CliIo } from './cli-io.js';
import type { CompactFlags } from './compact-command.js';
import { cliErrorMessage, cliText } from './flag-names.js';
import { COMMAND_HELP, commandFlags, commandHelp, generalHelp, packageVersion } from './help.js';
import { checkFlags, type FlagOptions, parseCliArgs, unknownCommand } from './parse-cli-args.js';
import { colorAllowed, jsonTerminalText, terminalText } from './terminal-text.js';

export type { CliIo } from './cli-io.js';

/**
 * Exit codes of the CLI: a stable contract. Every failure is 2 (bad input, options or files)
 * or 3 (a budget that cannot be met); `failure` (1) is kept for compatibility and no longer used.
 */
export const EXIT_CODES = Object.freeze({ ok: 0, failure: 1, badInput: 2, insufficientBudget: 3 });

const OPTIONS: FlagOptions = {
  model: { type: 'string' },
  'max-context': { type: 'string' },
  format: { type: 'string' },
  strategy: { type: 'string' },
  'keep-recent-turns': { type: 'string' },
  'keep-tool-io-pairs': { type: 'string' },
  'trigger-pct': { type: 'string' },
  buffer: { type: 'string' },
  'max-summary-tokens': { type: 'string' },
  force: { type: 'boolean' },
  report: { type: 'string' },
  config: { type: 'string' },
  'session-id': { type: 'string' },
  state: { type: 'string' },
  out: { type: 'string' },
  trace: { type: 'string' },
  json: { type: 'boolean' },
  store: { type: 'string' },
  'redis-url-env': { type: 'string' },
  queue: { type: 'string' },
  archive: { type: 'string' },
  session: { type: 'string' },
  'page-chars': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
};

type Values = Record<string, string | boolean | undefined>;

function badOption(name: string, problem: string): CompactError {
  return new CompactError('invalid_config', `--${name} ${problem}`, {
    issues: [{ path: [name], message: problem }],
  });
}

function integerOption(values: Values, name: string, min: number): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\s*\d+\s*$/.test(String(raw)) || !Number.isInteger(value) || value < min) {
    throw badOption(name, `must be an integer >= ${min} (got ${String(raw)})`);
  }
  return value;
}

function numberOption(values: Values, name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (String(raw).trim() === '' || !Number.isFinite(value))
    throw badOption(name, `must be a number (got ${String(raw)})`);
  return value;
}

/** Manager options from `--config`, `COMPACT_*` variables and the policy flags. */
export async function managerOptions(
  values: Values,
  env: CliIo['env'],
  cwd?: string,
): Promise<CompactManagerOptions> {
  const { loadManagerOptions } = await import('./load-manager-options.js');
  const base = await loadManagerOptions(values.config as string | undefined, env, cwd);
  const policy: Partial<CompactPolicy> = { ...(base.policy ?? {}) };
  const set = <K extends keyof CompactPolicy>(key: K, value: CompactPolicy[K] | undefined) => {
    if (value !== undefined) policy[key] = value;
  };
  set('strategy', values.strategy as string | undefined);
  set('keepRecentTurns', integerOption(values, 'keep-recent-turns', 1));
  set('keepToolIoPairs', integerOption(values, 'keep-tool-io-pairs', 1));
  set('triggerPct', numberOption(values, 'trigger-pct'));
  set('hardCapBuffer', integerOption(values, 'buffer', 0));
  set('maxSummaryTokens', integerOption(values, 'max-summary-tokens', 16));
  const options: CompactManagerOptions = { ...base, policy };
  if (values.model !== undefined) options.model = values.model as string;
  // The manager's own floor: '--max-context abc' names the same minimum as '--max-context 100'.
  const maxContext = integerOption(values, 'max-context', MIN_CONTEXT_TOKENS);
  if (maxContext !== undefined) options.maxContextTokens = maxContext;
  return options;
}

function formatOption(values: Values): MessageFormat | undefined {
  const format = values.format as string | undefined;
  if (format === undefined || format === 'auto') return undefined;
  if (format !== 'openai-chat' && format !== 'openai-responses' && format !== 'anthropic') {
    throw badOption('format', `must be auto, openai-chat, openai-responses or anthropic (got ${format})`);
  }
  return format;
}

/** The commands of the CLI (`mcp` is dispatched by the bin before `runCli`). */
const COMMANDS = Object.keys(COMMAND_HELP);

/**
 * What the CLI writes, made safe for a terminal: every text has its control characters made
 * visible (a summary or a file name may carry ESC sequences or U+202E); JSON output (`json`)
 * escapes C1 controls and bidi overrides as `\uXXXX` and stays exact JSON once parsed. A progress bar's leading carriage return is the CLI's own and stays.
 */
function terminalIo(io: CliIo, json: boolean): CliIo {
  const safe = (text: string) =>
    text.startsWith('\r') ? `\r${terminalText(text.slice(1))}` : terminalText(text);
  return {
    ...io,
    stdout: json ? (text) => io.stdout(jsonTerminalText(text)) : (text) => io.stdout(safe(text)),
    stderr: (text) => io.stderr(safe(text)),
  };
}

/**
 * One line for any failure: a `CompactError` in the CLI's words (flags, not option names);
 * anything else (a file that cannot be written, input nested too deep to walk) its message's
 * first line. `AGENT_COMPACTION_DEBUG=1` adds the stack.
 */
export function failureLine(error: unknown, env: CliIo['env']): { line: string; code: number } {
  const oneLine = (text: string) => text.replace(/\s*\r?\n\s*/g, ' ').trim();
  const debug = (err: Error) => (env.AGENT_COMPACTION_DEBUG ? `\n${err.stack ?? ''}` : '');
  if (isCompactError(error))
    return {
      line: `${oneLine(cliErrorMessage(error))}${debug(error)}`,
      code: error.code === 'insufficient_budget' ? EXIT_CODES.insufficientBudget : EXIT_CODES.badInput,
    };
  const err = error instanceof Error ? error : new Error(String(error));
  const message =
    err instanceof RangeError && /call stack/i.test(err.message)
      ? `input nested too deeply to process (${err.message})`
      : oneLine(err.message);
  return { line: `${message}${debug(err)}`, code: EXIT_CODES.badInput };
}

/**
 * Runs the `agent-compaction` CLI with `argv` (without `node` and the script) and returns
 * its exit code. The entry file only calls this. Warnings the library prints while the
 * command runs (`console.warn`) reach `io.stderr` in the CLI's words (`--max-context`, not
 * `maxContextTokens`).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const color = colorAllowed(io.env, io.isTTY === true);
  const label = (word: string, code: number) => (color ? `\u001b[${code}m${word}\u001b[0m` : word);
  const warn = console.warn;
  const textIo = terminalIo(io, false);
  console.warn = (...args: unknown[]) => textIo.stderr(`${cliText(formatText(...args))}\n`);
  try {
    return await dispatch(argv, io);
  } catch (error) {
    const { line, code } = failureLine(error, io.env);
    // The colour codes are the CLI's own; the line itself is made safe for the terminal.
    io.stderr(`${label('error:', 31)} ${terminalText(line)}\n`);
    return code;
  } finally {
    console.warn = warn;
  }
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  // The command's own flags first, so a typo is matched against what that command reads.
  const first = argv[0];
  if (first !== undefined && COMMAND_HELP[first]) checkFlags(argv, commandFlags(first), first);
  if (first === 'proxy' && !argv.includes('--help') && !argv.includes('-h')) {
    // The proxy reads its own flags (proxy-command.ts).
    await (await import('./proxy-command.js')).runProxyCommand(argv.slice(1), io);
    return EXIT_CODES.ok;
  }
  const { values, positionals } = parseCliArgs(argv, OPTIONS);
  const [command, file, ...extra] = positionals;
  if (values.version) {
    io.stdout(`${packageVersion()}\n`);
    return EXIT_CODES.ok;
  }
  if (values.help || command === 'help' || command === undefined) {
    const topic = command === 'help' ? file : command;
    if (topic !== undefined && !COMMAND_HELP[topic]) throw unknownCommand(topic, COMMANDS);
    io.stdout(`${(topic && commandHelp(topic)) ?? generalHelp()}\n`);
    return command === undefined && !values.help ? EXIT_CODES.badInput : EXIT_CODES.ok;
  }
  if (!COMMAND_HELP[command]) throw unknownCommand(command, COMMANDS);
  checkFlags(argv, commandFlags(command), command);
  if (command === 'mcp') throw badOption('command', 'mcp runs from the agent-compaction bin');
  if (command === 'worker') {
    if (file !== undefined) throw new CompactError('invalid_config', `unexpected argument: ${file}`);
    const { runWorkerCommand } = await import('./worker-command.js');
    await runWorkerCommand(
      values.config as string | undefined,
      values.json === true,
      terminalIo(io, values.json === true),
    );
    return EXIT_CODES.ok;
  }
  if (file === undefined)
    throw new CompactError(
      'invalid_config',
      `${command} needs a ${command === 'status' ? 'SESSION_DIR' : 'FILE'} (see agent-compaction ${command} --help)`,
    );
  if (extra.length > 0) throw new CompactError('invalid_config', `unexpected argument: ${extra[0]}`);
  const json = values.json === true || command === 'estimate' || command === 'compact';
  const out = terminalIo(io, json);
  if (command === 'status') return runStatus(file, values, out);
  const options = await managerOptions(values, io.env, io.cwd);
  const flags = {
    ...(values.out !== undefined ? { out: values.out as string } : {}),
    ...(values.trace !== undefined ? { trace: values.trace as string } : {}),
    ...(values['session-id'] !== undefined ? { sessionId: values['session-id'] as string } : {}),
  };
  if (command === 'replay') {
    const { runReplayCommand } = await import('./replay/replay-command.js');
    await runReplayCommand(file, options, { ...flags, json: values.json === true }, out);
    return EXIT_CODES.ok;
  }
  if (command === 'report') {
    const { runReportCommand } = await import('./report/report-command.js');
    await runReportCommand(file, options, flags, out);
    return EXIT_CODES.ok;
  }
  const format = formatOption(values);
  const compactFlags: CompactFlags = {
    ...(format ? { format } : {}),
    maxContextGiven: values['max-context'] !== undefined,
    force: values.force === true,
    ...(values.report !== undefined ? { report: values.report as string } : {}),
    ...(values.state !== undefined ? { state: values.state as string } : {}),
    ...flags,
  };
  // Loaded for these two commands only: a worker or a status needs none of it.
  const { runCompactCommand, runEstimateCommand } = await import('./compact-command.js');
  if (command === 'estimate') await runEstimateCommand(file, options, compactFlags, out);
  else await runCompactCommand(file, options, compactFlags, out);
  return EXIT_CODES.ok;
}

async function runStatus(file: string, values: Values, io: CliIo): Promise<number> {
  if (values.store !== undefined && values.store !== 'redis')
    throw badOption('store', `must be redis (got ${values.store}); without it SESSION is an archive folder`);
  if (values.store === 'redis') {
    const { runStoreStatus } = await import('./status/store-status.js');
    const urlEnv = values['redis-url-env'] as string | undefined;
    const queue = values.queue as string | undefined;
    await runStoreStatus(
      file,
      { json: values.json === true, ...(urlEnv ? { urlEnv } : {}), ...(queue ? { queue } : {}) },
      io,
    );
    return EXIT_CODES.ok;
  }
  const { runStatusCommand } = await import('./status/status-command.js');
  await runStatusCommand(file, { json: values.json === true }, io);
  return EXIT_CODES.ok;
}
