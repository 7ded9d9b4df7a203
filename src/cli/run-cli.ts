import { parseArgs } from 'node:util';
import { CompactManager } from '../core/compact-manager.js';
import { modelInfo } from '../core/counting/model-table.js';
import { CompactError, isCompactError } from '../core/errors.js';
import { type CompactManagerOptions, DEFAULT_MODEL } from '../core/manager-options.js';
import type { MessageFormat } from '../core/messages/message.js';
import type { CompactPolicy } from '../core/policy.js';
import { redactDeep } from '../core/redaction/redactor.js';
import { writePrivateFile } from '../storage/fs/private-files.js';
import { type CliIo, reportRedactor } from './cli-io.js';
import { cliErrorMessage } from './flag-names.js';
import { COMMAND_HELP, commandHelp, generalHelp, packageVersion } from './help.js';
import { readInput } from './read-input.js';
import { loadStateFile, saveStateFile } from './state-file.js';

export type { CliIo } from './cli-io.js';

/** Exit codes of the CLI: a stable contract. */
export const EXIT_CODES = Object.freeze({ ok: 0, failure: 1, badInput: 2, insufficientBudget: 3 });

const OPTIONS = {
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
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

function badOption(name: string, problem: string): CompactError {
  return new CompactError('invalid_config', `--${name} ${problem}`, {
    issues: [{ path: [name], message: problem }],
  });
}

function integerOption(values: Record<string, unknown>, name: string, min: number): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\s*\d+\s*$/.test(String(raw)) || !Number.isInteger(value) || value < min) {
    throw badOption(name, `must be an integer >= ${min} (got ${String(raw)})`);
  }
  return value;
}

function numberOption(values: Record<string, unknown>, name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (String(raw).trim() === '' || !Number.isFinite(value))
    throw badOption(name, `must be a number (got ${String(raw)})`);
  return value;
}

/** Manager options from `--config`, `COMPACT_*` variables and the policy flags. */
export async function managerOptions(
  values: Record<string, unknown>,
  env: CliIo['env'],
): Promise<CompactManagerOptions> {
  let base: CompactManagerOptions = {};
  const configFile = values.config as string | undefined;
  const { loadManagerOptions } = await import('./load-manager-options.js');
  base = await loadManagerOptions(configFile, env);
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
  const maxContext = integerOption(values, 'max-context', 1);
  if (maxContext !== undefined) options.maxContextTokens = maxContext;
  return options;
}

function formatOption(values: Record<string, unknown>): MessageFormat | undefined {
  const format = values.format as string | undefined;
  if (format === undefined || format === 'auto') return undefined;
  if (format !== 'openai-chat' && format !== 'openai-responses' && format !== 'anthropic') {
    throw badOption('format', `must be auto, openai-chat, openai-responses or anthropic (got ${format})`);
  }
  return format;
}

/** The commands `runCli` runs (`mcp` is dispatched by the bin before it). */
const COMMANDS = new Set(['estimate', 'compact', 'replay', 'report', 'status', 'mcp']);

/**
 * Runs the `agent-compaction` CLI with `argv` (without `node` and the script) and returns
 * its exit code. The entry file only calls this.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<
    typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; args: string[] }>
  >;
  // `--buffer -1` would read as an unknown flag: join negative numbers to their option, so
  // the value's own check names the option.
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name && name in OPTIONS && next !== undefined && /^-\d/.test(next)) {
      args.push(`${arg}=${next}`);
      i++;
    } else args.push(arg);
  }
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    io.stderr(`error: ${(error as Error).message}\n`);
    return EXIT_CODES.badInput;
  }
  const { values, positionals } = parsed;
  const [command, file, ...extra] = positionals;
  if (values.version) {
    io.stdout(`${packageVersion()}\n`);
    return EXIT_CODES.ok;
  }
  if (values.help && command !== undefined && COMMAND_HELP[command]) {
    io.stdout(`${commandHelp(command)}\n`);
    return EXIT_CODES.ok;
  }
  if (values.help || command === 'help' || command === undefined) {
    const topic = command === 'help' && file !== undefined ? commandHelp(file) : undefined;
    io.stdout(`${topic ?? generalHelp()}\n`);
    return command === undefined && !values.help ? EXIT_CODES.badInput : EXIT_CODES.ok;
  }
  try {
    if (command === 'mcp') throw badOption('command', 'mcp runs from the agent-compaction bin');
    if (!COMMANDS.has(command))
      throw badOption('command', `"${command}" is not a command (${[...COMMANDS].join(', ')})`);
    if (file === undefined)
      throw new CompactError(
        'invalid_config',
        `${command} needs a ${command === 'status' ? 'SESSION_DIR' : 'FILE'} (see agent-compaction ${command} --help)`,
      );
    if (extra.length > 0) throw new CompactError('invalid_config', `unexpected argument: ${extra[0]}`);
    if (command === 'status') {
      if (values.store !== undefined && values.store !== 'redis')
        throw badOption(
          'store',
          `must be redis (got ${values.store}); without it SESSION is an archive folder`,
        );
      if (values.store === 'redis') {
        const { runStoreStatus } = await import('./status/store-status.js');
        const urlEnv = values['redis-url-env'];
        await runStoreStatus(file, { json: values.json === true, ...(urlEnv ? { urlEnv } : {}) }, io);
        return EXIT_CODES.ok;
      }
      const { runStatusCommand } = await import('./status/status-command.js');
      await runStatusCommand(file, { json: values.json === true }, io);
      return EXIT_CODES.ok;
    }
    const options = await managerOptions(values, io.env);
    const format = formatOption(values);
    const flags = {
      ...(values.out !== undefined ? { out: values.out } : {}),
      ...(values.trace !== undefined ? { trace: values.trace } : {}),
      ...(values['session-id'] !== undefined ? { sessionId: values['session-id'] } : {}),
    };
    if (command === 'replay') {
      const { runReplayCommand } = await import('./replay/replay-command.js');
      await runReplayCommand(file, options, { ...flags, json: values.json === true }, io);
      return EXIT_CODES.ok;
    }
    if (command === 'report') {
      const { runReportCommand } = await import('./report/report-command.js');
      await runReportCommand(file, options, flags, io);
      return EXIT_CODES.ok;
    }
    const input = await readInput(file, io.stdin);
    const callOptions = {
      ...(input.tools ? { tools: input.tools } : {}),
      ...(input.system !== undefined ? { system: input.system } : {}),
      ...(format ? { format } : {}),
    };
    if (command === 'estimate') {
      const maxGiven =
        values['max-context'] !== undefined ||
        options.maxContextTokens !== undefined ||
        modelInfo(options.model ?? DEFAULT_MODEL).known;
      const manager = new CompactManager(options);
      const estimate = manager.estimate(input.messages, callOptions);
      const out: Record<string, unknown> = {
        model: estimate.model,
        total: estimate.total,
        breakdown: {
          system: estimate.breakdown.system,
          developer: estimate.breakdown.developer,
          tools_schema: estimate.breakdown.toolsSchema,
          messages: estimate.breakdown.messages,
        },
        tokenizer: estimate.tokenizer,
        exact: estimate.exact,
      };
      if (maxGiven) {
        out.max_context_tokens = estimate.maxContextTokens;
        // usage_pct is a fraction (kept one release); usage_percent is the percentage.
        out.usage_pct = Number(estimate.usagePct.toFixed(6));
        out.usage_percent = Number((estimate.usagePct * 100).toFixed(2));
      }
      io.stdout(`${JSON.stringify(out, null, 2)}\n`);
      return EXIT_CODES.ok;
    }
    if (options.maxContextTokens === undefined) throw badOption('max-context', 'is required for compact');
    const sessionId = (values['session-id'] as string | undefined) ?? 'cli';
    const statePath = values.state as string | undefined;
    const store = statePath === undefined ? undefined : await loadStateFile(statePath, sessionId);
    const manager = new CompactManager(store ? { ...options, store } : options);
    let result: Awaited<ReturnType<typeof manager.compact>>;
    try {
      result = await manager.compact(sessionId, input.messages, {
        ...callOptions,
        force: values.force === true,
      });
      if (store && statePath !== undefined) await saveStateFile(statePath, store, sessionId);
    } finally {
      // Queued events and archive writes go out on every path, errors included.
      await manager.shutdown();
    }
    if (values.report !== undefined) {
      const { messages: _messages, ...report } = result;
      // Reports leave the process: redacted like every export, with the configured patterns.
      const redact = reportRedactor(options.redaction);
      await writePrivateFile(
        values.report as string,
        `${JSON.stringify(redact ? redactDeep(report, redact) : report, null, 2)}\n`,
        { what: '--report' },
      );
    }
    io.stdout(`${JSON.stringify(result.messages, null, 2)}\n`);
    return EXIT_CODES.ok;
  } catch (error) {
    if (isCompactError(error)) {
      io.stderr(`error: ${cliErrorMessage(error)}\n`);
      return error.code === 'insufficient_budget' ? EXIT_CODES.insufficientBudget : EXIT_CODES.badInput;
    }
    io.stderr(`error: ${(error as Error)?.stack ?? String(error)}\n`);
    return EXIT_CODES.failure;
  }
}
