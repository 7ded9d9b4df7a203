import { modelInfo } from '../core/counting/model-table.js';
import { CompactError, isCompactError } from '../core/errors.js';
import { CompactManager } from '../core/manager/compact-manager.js';
import { type CompactManagerOptions, DEFAULT_MODEL } from '../core/manager/manager-options.js';
import { detectFormat } from '../core/messages/formats/detect-format.js';
import type { MessageFormat } from '../core/messages/message.js';
import { bodyReplyTokens } from '../core/preflight/body/reply-tokens.js';
import { redactDeep } from '../core/redaction/redactor.js';
import { writePrivateFile } from '../storage/fs/private-files.js';
import { type CliIo, reportRedactor } from './cli-io.js';
import { type CliInput, countedTools, readInput } from './read-input.js';
import { loadStateFile, saveStateFile } from './state-file.js';
import { lockStateFile } from './state-lock.js';

/** The flags `estimate` and `compact` read besides the manager's options. */
export interface CompactFlags {
  format?: MessageFormat;
  maxContextGiven: boolean;
  force?: boolean;
  report?: string;
  state?: string;
  sessionId?: string;
}

/**
 * Runs `work`; when `--format` forced a format and the messages are not in it, the error
 * names the format they look like (`messages[1].content[0]: ... (the messages look like
 * openai-chat, not anthropic: --format openai-chat, or leave --format out)`).
 */
export async function namingFormatFound<T>(
  messages: readonly unknown[],
  format: MessageFormat | undefined,
  work: () => T | Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (format === undefined || !isCompactError(error, 'invalid_messages')) throw error;
    let found: MessageFormat;
    try {
      found = detectFormat(messages);
    } catch {
      throw error;
    }
    if (found === format) throw error;
    throw new CompactError(
      'invalid_messages',
      `${error.message} (the messages look like ${found}, not ${format}: --format ${found}, or leave --format out)`,
      { cause: error, ...(error.issues ? { issues: error.issues } : {}) },
    );
  }
}

/**
 * The format the input's body names when its messages do not: a top-level `system` belongs to
 * an Anthropic Messages body (a Chat body holds its system prompt as a message, a Responses one
 * as `instructions`), and plain `user` / `assistant` turns are valid in every format. Read as
 * Chat, a compacted Claude request opened with the summary as an assistant turn, which the
 * Messages API refuses ("first message must use the user role").
 */
export function bodyFormat(input: CliInput): MessageFormat | undefined {
  if (input.messagesKey === 'input') return 'openai-responses';
  if (input.object === undefined || input.system === undefined) return undefined;
  const plain = input.messages.every((message) => {
    const { role, content } = (message ?? {}) as { role?: unknown; content?: unknown };
    if (role !== 'user' && role !== 'assistant') return false;
    return (
      typeof content === 'string' ||
      (Array.isArray(content) &&
        content.every((part) => (part as { type?: unknown } | null)?.type === 'text'))
    );
  });
  return plain ? 'anthropic' : undefined;
}

function callOptions(input: CliInput, forced: MessageFormat | undefined) {
  const format = forced ?? bodyFormat(input);
  return {
    ...countedTools(input),
    ...(input.system !== undefined ? { system: input.system } : {}),
    ...(format ? { format } : {}),
  };
}

/**
 * The input's own `model` (a provider request body: `{model, messages, ...}`) when neither
 * `--model` nor the config names one, so a Claude request is counted as Claude's, not as
 * the default model's.
 */
export function withInputModel(options: CompactManagerOptions, input: CliInput): CompactManagerOptions {
  const model = input.object?.model;
  if (options.model !== undefined || options.tokenCounter !== undefined) return options;
  return typeof model === 'string' && model.trim() !== '' ? { ...options, model } : options;
}

/** `agent-compaction estimate FILE`: the JSON estimate on stdout. */
export async function runEstimateCommand(
  file: string,
  options: CompactManagerOptions,
  flags: CompactFlags,
  io: CliIo,
): Promise<void> {
  const input = await readInput(file, io.stdin, io.stderr);
  options = withInputModel(options, input);
  const maxGiven =
    flags.maxContextGiven ||
    options.maxContextTokens !== undefined ||
    modelInfo(options.model ?? DEFAULT_MODEL).known;
  const manager = new CompactManager(options);
  const estimate = await namingFormatFound(input.messages, flags.format, () =>
    manager.estimate(input.messages, callOptions(input, flags.format)),
  );
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
  out.max_context_tokens = estimate.maxContextTokens;
  // An unknown model's window is the default the warning names: said, and marked as assumed.
  if (!maxGiven) out.max_context_assumed = true;
  // usage_pct is a fraction (kept one release); usage_percent is the percentage.
  out.usage_pct = Number(estimate.usagePct.toFixed(6));
  out.usage_percent = Number((estimate.usagePct * 100).toFixed(2));
  io.stdout(`${JSON.stringify(out, null, 2)}\n`);
}

/**
 * The compacted request in the input's shape: a bare array (or JSONL) prints as an array; an
 * object (`{system, messages, tools}` and any other keys, in their order) prints as the same
 * object with its messages replaced.
 */
export function outputShape(input: CliInput, messages: readonly unknown[]): unknown {
  if (input.object === undefined) return messages;
  return { ...input.object, [input.messagesKey ?? 'messages']: messages };
}

/** One compaction of the input, with the state file read before and written after. */
async function compactOnce(
  input: CliInput,
  options: CompactManagerOptions,
  flags: CompactFlags,
  sessionId: string,
): Promise<Awaited<ReturnType<CompactManager['compact']>>> {
  const store = flags.state === undefined ? undefined : await loadStateFile(flags.state, sessionId);
  const manager = new CompactManager(store ? { ...options, store } : options);
  try {
    const result = await namingFormatFound(input.messages, flags.format, () =>
      manager.compact(sessionId, input.messages, {
        ...callOptions(input, flags.format),
        // A request body's reply is kept free below the window, as the proxy keeps it.
        ...bodyReplyTokens(input.object),
        force: flags.force === true,
      }),
    );
    if (store && flags.state !== undefined) await saveStateFile(flags.state, store, sessionId);
    return result;
  } finally {
    // Queued events and archive writes go out on every path, errors included.
    await manager.shutdown();
  }
}

/** `agent-compaction compact FILE --max-context N`: the messages to send on stdout. */
export async function runCompactCommand(
  file: string,
  options: CompactManagerOptions,
  flags: CompactFlags,
  io: CliIo,
): Promise<void> {
  const input = await readInput(file, io.stdin, io.stderr);
  options = withInputModel(options, input);
  if (options.maxContextTokens === undefined)
    throw new CompactError('invalid_config', '--max-context is required for compact', {
      issues: [{ path: ['max-context'], message: 'is required for compact' }],
    });
  const sessionId = flags.sessionId ?? 'cli';
  // Held from before the state is read until after it is written back (state-lock.ts).
  const unlock = flags.state === undefined ? undefined : await lockStateFile(flags.state);
  let result: Awaited<ReturnType<CompactManager['compact']>>;
  try {
    result = await compactOnce(input, options, flags, sessionId);
  } finally {
    await unlock?.();
  }
  if (flags.report !== undefined) {
    const { messages: _messages, ...report } = result;
    // Reports leave the process: redacted like every export, with the configured patterns.
    const redact = await reportRedactor(options.redaction);
    await writePrivateFile(
      flags.report,
      `${JSON.stringify(redact ? redactDeep(report, redact) : report, null, 2)}\n`,
      { what: '--report' },
    ).catch((error: NodeJS.ErrnoException) => {
      if (error instanceof CompactError) throw error;
      throw new CompactError(
        'invalid_config',
        `--report ${flags.report}: cannot write (${error.code ?? error.message})`,
        { cause: error },
      );
    });
  }
  io.stdout(`${JSON.stringify(outputShape(input, result.messages), null, 2)}\n`);
}
