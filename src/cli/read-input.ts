import { readFile } from 'node:fs/promises';
import { notUtf8 } from '../config/utf8-text.js';
import { CompactError } from '../core/errors.js';
import { parseJsonInSlices } from '../core/json/parse-json-in-slices.js';
import { bodyResponseSchema, withResponseSchema } from '../core/preflight/body/response-schema.js';
import { dropTornLastLine } from './torn-line.js';

/**
 * An input of this many bytes or more is parsed across turns of the event loop (the CLI's
 * own timers, an MCP server's other requests); a smaller one at once.
 */
export const SLICED_INPUT_BYTES = 1024 * 1024;

/** What a CLI input file holds. */
export interface CliInput {
  messages: unknown[];
  tools?: unknown[];
  system?: string | unknown[];
  /** The input object when it was one (`{system, messages, tools, ...}`): `compact` prints the same shape. */
  object?: Record<string, unknown>;
  /**
   * The object's key holding the messages: `input` for an OpenAI Responses request body
   * (`{model, instructions?, input, tools?}`, whose format it names), else `messages`.
   */
  messagesKey?: 'messages' | 'input';
}

/** All of `stdin`'s bytes (it can be read once). */
export async function readStdin(stdin: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

/**
 * Parses a CLI input: a JSON array of messages, a JSONL file (one message a line), an
 * object `{messages, tools?, system?}`, or a Responses body `{input, instructions?, tools?}`. A torn last JSONL line is skipped with a warning.
 */
export function parseInput(
  text: string,
  source = 'input',
  warn: (line: string) => void = () => {},
): CliInput {
  const trimmed = text.trim();
  if (trimmed === '') throw new CompactError('invalid_messages', `${source} is empty`);
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    // Not one JSON document: try JSON Lines, naming the file's own line number of a broken record.
    // A file that ends in a newline has no torn line: its bad last line is an error like any other.
    const terminated = /\n\s*$/.test(text);
    const kept = dropTornLastLine(terminated ? `${trimmed}\n` : trimmed, source, warn);
    const lines = kept.split(/\r?\n/);
    const offset = text.slice(0, text.indexOf(trimmed)).split(/\r?\n/).length - 1;
    const messages: unknown[] = [];
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.trim() === '') continue;
      try {
        messages.push(JSON.parse(lines[i]!));
      } catch (lineError) {
        throw new CompactError(
          'invalid_messages',
          `${source} line ${i + 1 + offset}: not valid JSON (${(lineError as Error).message})`,
        );
      }
    }
    return { messages };
  }
  return inputOf(value, source);
}

/** The input a parsed JSON document holds. */
function inputOf(value: unknown, source: string): CliInput {
  if (Array.isArray(value)) return { messages: value };
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if (!Array.isArray(object.messages) && Array.isArray(object.input)) return responsesInput(object, source);
    if (!Array.isArray(object.messages)) {
      throw new CompactError(
        'invalid_messages',
        `${source}: an object input needs a "messages" array (or a Responses body's "input" array)`,
      );
    }
    const input: CliInput = { messages: object.messages, object };
    withTools(input, object, source);
    if (object.system !== undefined) {
      if (typeof object.system !== 'string' && !Array.isArray(object.system)) {
        throw new CompactError(
          'invalid_messages',
          `${source}: "system" must be a string or an array of blocks`,
        );
      }
      input.system = object.system as string | unknown[];
    }
    return input;
  }
  throw new CompactError(
    'invalid_messages',
    `${source}: expected a JSON array of messages, JSON Lines, or {"messages": [...]}`,
  );
}

/** An OpenAI Responses request body: `input` is its messages, `instructions` its system prompt. */
function responsesInput(object: Record<string, unknown>, source: string): CliInput {
  const input: CliInput = { messages: object.input as unknown[], object, messagesKey: 'input' };
  withTools(input, object, source);
  if (object.instructions !== undefined && object.instructions !== null) {
    if (typeof object.instructions !== 'string')
      throw new CompactError('invalid_messages', `${source}: "instructions" must be a string`);
    input.system = object.instructions;
  }
  return input;
}

function withTools(input: CliInput, object: Record<string, unknown>, source: string): void {
  if (object.tools === undefined) return;
  if (!Array.isArray(object.tools))
    throw new CompactError('invalid_messages', `${source}: "tools" must be an array`);
  input.tools = object.tools;
}

/** Reads a CLI input from a file path, or from stdin for `-`. */
export async function readInput(
  file: string,
  stdin: NodeJS.ReadableStream,
  warn?: (line: string) => void,
): Promise<CliInput> {
  let bytes: Buffer;
  try {
    bytes = file === '-' ? await readStdin(stdin) : await readFile(file);
  } catch (error) {
    throw new CompactError(
      'invalid_messages',
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const source = file === '-' ? 'stdin' : file;
  const problem = notUtf8(bytes);
  if (problem !== undefined) throw new CompactError('invalid_messages', `${source} ${problem}`);
  return parseInputBytes(bytes, source, warn);
}

/**
 * {@link parseInput} of a file's bytes; one of {@link SLICED_INPUT_BYTES} or more that is one
 * JSON document is parsed across turns of the event loop (the same value). Anything else
 * (JSON Lines, a byte-order mark, not JSON) is read by `parseInput`, with its messages.
 */
export async function parseInputBytes(
  bytes: Buffer,
  source = 'input',
  warn?: (line: string) => void,
): Promise<CliInput> {
  if (bytes.length >= SLICED_INPUT_BYTES) {
    let value: unknown;
    try {
      ({ value } = await parseJsonInSlices(bytes));
    } catch {
      return parseInput(bytes.toString('utf8'), source, warn);
    }
    return inputOf(value, source);
  }
  return parseInput(bytes.toString('utf8'), source, warn);
}

/** The input's tool schemas and the structured-output schema its body sends, counted alike. */
export function countedTools(input: CliInput): { tools?: readonly unknown[] } {
  const tools = withResponseSchema(input.tools, bodyResponseSchema(input.object));
  return tools && tools.length > 0 ? { tools } : {};
}
