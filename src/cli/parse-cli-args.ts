/**
 * The CLI's arguments: `node:util` parseArgs, with the errors a person can act on. An unknown
 * command or flag is one line naming the closest valid one; Node's own parser messages (which
 * suggest `-- "--bogus"`) never reach the user.
 */
import { parseArgs } from 'node:util';
import { CompactError } from '../core/errors.js';
import { closestName } from './closest-name.js';

/** The flags of the CLI, as `parseArgs` options. */
export type FlagOptions = Record<string, { type: 'string' | 'boolean'; short?: string }>;

function invalid(message: string, path: string): CompactError {
  return new CompactError('invalid_config', message, { issues: [{ path: [path], message }] });
}

/** `error: unknown command 'x'` with the closest command, or the list of them. */
export function unknownCommand(command: string, commands: readonly string[]): CompactError {
  const near = closestName(command, commands);
  const hint = near ? `did you mean '${near}'?` : `commands: ${commands.join(', ')}`;
  return invalid(`unknown command '${command}' (${hint}); see agent-compaction --help`, 'command');
}

/**
 * Checks each `--name` of `args` (up to a `--` terminator) against `allowed`: an unknown one
 * is a one-line error naming the closest allowed flag, or the command's help.
 */
export function checkFlags(args: readonly string[], allowed: readonly string[], command?: string): void {
  const shorts = new Set(['-h', '-v']);
  for (const arg of args) {
    if (arg === '--') return;
    if (arg === '-' || !arg.startsWith('-') || /^-\d/.test(arg)) continue;
    const flag = arg.startsWith('--') ? arg.split('=')[0]! : arg;
    if (allowed.includes(flag) || shorts.has(flag)) continue;
    const near = closestName(flag, allowed);
    const where = command ? ` for ${command}` : '';
    const own = allowed.filter((name) => name !== '--help' && name !== '--version');
    const hint = near
      ? `did you mean ${near}?`
      : command && own.length <= 6
        ? `its flags: ${own.join(', ')}`
        : `see agent-compaction ${command ? `${command} ` : ''}--help`;
    throw invalid(`unknown flag ${flag}${where} (${hint})`, flag);
  }
}

/**
 * `--buffer -1` would read as an unknown flag: negative numbers join their option
 * (`--buffer=-1`), so the value's own check names the option.
 */
function joinNegativeNumbers(argv: readonly string[], options: FlagOptions): string[] {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      args.push(`${arg}=${next}`);
      i++;
    } else args.push(arg);
  }
  return args;
}

/** Node's parser message for a known flag, said in one short line. */
function parserProblem(error: Error, options: FlagOptions): string {
  const flag = /'(--?[\w-]+)/.exec(error.message)?.[1];
  const name = flag?.replace(/^--?/, '');
  const option = name === undefined ? undefined : options[name];
  if (flag && option?.type === 'string') return `${flag} needs a value (${flag} VALUE)`;
  if (flag && option?.type === 'boolean') return `${flag} takes no value`;
  return error.message.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, '');
}

/** Parsed arguments: flag values and positionals. */
export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** Parses `argv` against `options`; unknown flags and parser errors are one-line `invalid_config` errors. */
export function parseCliArgs(argv: readonly string[], options: FlagOptions): ParsedArgs {
  const args = joinNegativeNumbers(argv, options);
  checkFlags(
    args,
    Object.keys(options).map((name) => `--${name}`),
  );
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: values as ParsedArgs['values'], positionals };
  } catch (error) {
    throw invalid(parserProblem(error as Error, options), 'argv');
  }
}
