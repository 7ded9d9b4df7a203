/**
 * The recall tool as every integration exposes it: one name, one description, one input
 * schema, and one handler that turns a model's input into text (or a tool error) for one
 * session. The SDK-specific definitions (`agent-compaction/openai-agents`, `/ai-sdk`,
 * `/anthropic`) and the MCP server wrap {@link runRecallTool}.
 */

import { formatCount } from '../core/format-count.js';
import type { RecallArchive, RecallHit, RecallPage } from './recall-archive.js';
import { MAX_QUERY_CHARS } from './recall-archive.js';
import { isRecallError, RecallError, type RecallErrorCode } from './recall-error.js';

/** The tool's name. */
export const RECALL_TOOL_NAME = 'recall';

/** The tool's description, written for the model. */
export const RECALL_TOOL_DESCRIPTION = [
  'Read back conversation content that was removed to save context.',
  'Placeholders such as [cleared: grep output, 25,000 chars; recall "tool-3kf93jd02kd9"],',
  'cut markers ("full text: recall ref \\"cut-...\\"") and the summary line "Archived originals: recall ref \\"sum-v2\\""',
  'name a ref: pass it as "ref" to get the original text (long texts come in pages: pass "page").',
  'If you do not know the ref, pass "query" (a few words naming what you are looking for: a file, an id, a setting)',
  'to get the best-matching archived passages with their refs.',
].join(' ');

/** The tool's input, as the model sends it (`null` counts as absent). */
export interface RecallToolInput {
  /** The reference a placeholder, cut marker or summary names. */
  ref?: string | null;
  /** Words to search the archive for. */
  query?: string | null;
  /** 1-based page of the text under `ref`. */
  page?: number | null;
  /** Characters per page. */
  page_chars?: number | null;
  /** Search hits to return. */
  limit?: number | null;
}

const PROPERTY_DESCRIPTIONS = {
  ref: 'The recall ref exactly as a placeholder, cut marker or summary names it, e.g. "tool-3kf93jd02kd9".',
  query: 'Words naming what you look for (when you have no ref).',
  page: 'Page of the text under ref, from 1.',
  page_chars: 'Characters per page (optional).',
  limit: 'Number of passages a query returns (optional).',
} as const;

/**
 * The input schema (JSON Schema, every field optional): for Anthropic `input_schema`, the
 * AI SDK's `jsonSchema()` and MCP.
 */
export const RECALL_INPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    ref: { type: 'string', description: PROPERTY_DESCRIPTIONS.ref },
    query: { type: 'string', description: PROPERTY_DESCRIPTIONS.query },
    page: { type: 'integer', minimum: 1, description: PROPERTY_DESCRIPTIONS.page },
    page_chars: { type: 'integer', minimum: 100, description: PROPERTY_DESCRIPTIONS.page_chars },
    limit: { type: 'integer', minimum: 1, description: PROPERTY_DESCRIPTIONS.limit },
  },
  additionalProperties: false,
} as const);

/**
 * The same schema in the form OpenAI strict function calling needs (every field required,
 * nullable): for Agents JS `tool()` and Chat Completions / Responses `strict: true`.
 */
export const RECALL_INPUT_SCHEMA_STRICT = Object.freeze({
  type: 'object',
  properties: {
    ref: { type: ['string', 'null'], description: PROPERTY_DESCRIPTIONS.ref },
    query: { type: ['string', 'null'], description: PROPERTY_DESCRIPTIONS.query },
    page: { type: ['integer', 'null'], description: PROPERTY_DESCRIPTIONS.page },
    page_chars: { type: ['integer', 'null'], description: PROPERTY_DESCRIPTIONS.page_chars },
    limit: { type: ['integer', 'null'], description: PROPERTY_DESCRIPTIONS.limit },
  },
  required: ['ref', 'query', 'page', 'page_chars', 'limit'],
  additionalProperties: false,
} as const);

/** What the handler answers: the text for the model, and whether it is an error. */
export interface RecallToolResult {
  text: string;
  isError: boolean;
  /** The error's code, when `isError`. */
  code?: RecallErrorCode;
}

/** The session a tool call recalls from: fixed, or read per call (e.g. from the run context). */
export type RecallSession<C = unknown> = string | ((context: C) => string);

const count = formatCount;

/** The longest unknown key an error message repeats. */
const MAX_ECHOED_KEY_CHARS = 60;

function field<T>(
  input: Record<string, unknown>,
  name: keyof RecallToolInput,
  type: 'string' | 'integer',
): T | undefined {
  const value = input[name];
  if (value === undefined || value === null) return undefined;
  if (type === 'string' && typeof value !== 'string')
    throw new RecallError('invalid_input', `${name} must be a string`, { field: name });
  if (type === 'integer' && !Number.isInteger(value))
    throw new RecallError('invalid_input', `${name} must be an integer`, { field: name });
  return value as T;
}

/** A ref as models tend to pass it: surrounding spaces and one pair of quotes are dropped. */
function cleanRef(ref: string): string {
  const trimmed = ref.trim();
  const quoted = /^(["'`])(.*)\1$/.exec(trimmed);
  return quoted ? quoted[2]!.trim() : trimmed;
}

/** Checks the model's input. Throws {@link RecallError} naming the field at fault. */
export function parseRecallInput(input: unknown): RecallToolInput {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new RecallError(
        'invalid_input',
        'the input must be a JSON object like {"ref": "tool-…"} or {"query": "…"}',
      );
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new RecallError(
      'invalid_input',
      'the input must be an object like {"ref": "tool-…"} or {"query": "…"}',
    );
  }
  const record = value as Record<string, unknown>;
  // Own keys only: `in` would take `constructor` or `toString` for a field of the tool.
  const unknown = Object.keys(record).find((key) => !Object.hasOwn(PROPERTY_DESCRIPTIONS, key));
  if (unknown !== undefined) {
    // The model's key is echoed, so it is cut: a 100,000-char key is not a 100,000-char answer.
    const name =
      unknown.length > MAX_ECHOED_KEY_CHARS ? `${unknown.slice(0, MAX_ECHOED_KEY_CHARS)}…` : unknown;
    throw new RecallError('invalid_input', `unknown field ${name}: pass ref or query`, { field: name });
  }
  const ref = field<string>(record, 'ref', 'string');
  const query = field<string>(record, 'query', 'string');
  const out: RecallToolInput = {};
  if (ref !== undefined && ref.trim() !== '') out.ref = cleanRef(ref);
  if (query !== undefined && query.trim() !== '') out.query = query.trim().slice(0, MAX_QUERY_CHARS + 1);
  if (out.ref === undefined && out.query === undefined)
    throw new RecallError(
      'invalid_input',
      'pass either ref (from a placeholder) or query (words to search for)',
    );
  if (out.ref !== undefined && out.query !== undefined)
    throw new RecallError('invalid_input', 'pass ref or query, not both');
  const page = field<number>(record, 'page', 'integer');
  const pageChars = field<number>(record, 'page_chars', 'integer');
  const limit = field<number>(record, 'limit', 'integer');
  if (page !== undefined) out.page = page;
  if (pageChars !== undefined) out.page_chars = pageChars;
  if (limit !== undefined) out.limit = limit;
  return out;
}

function describe(item: { kind: string; toolName?: string }): string {
  if (item.kind === 'tool_result') return `output of tool "${item.toolName ?? 'unknown'}"`;
  if (item.kind === 'tool_arguments') return `arguments of tool call "${item.toolName ?? 'unknown'}"`;
  if (item.kind === 'summarized') return 'messages folded into the summary';
  return 'message';
}

/** The text the model gets for one page. */
export function formatRecallPage(page: RecallPage): string {
  const where =
    page.pages > 1
      ? `, page ${page.page} of ${page.pages} (chars ${count(page.start)}-${count(page.end)} of ${count(page.totalChars)})`
      : ` (${count(page.totalChars)} chars)`;
  const lines = [`[recall ref "${page.ref}": ${describe(page)}${where}]`, page.text];
  if (page.page < page.pages) {
    lines.push(`[more: recall {"ref": "${page.ref}", "page": ${page.page + 1}}]`);
  }
  return lines.join('\n');
}

/** The text the model gets for search hits. */
export function formatRecallHits(query: string, hits: readonly RecallHit[]): string {
  if (hits.length === 0) return `[recall: no archived passage matches "${query}"; try other words]`;
  const lines = [
    `[recall: ${hits.length} archived passage${hits.length === 1 ? '' : 's'} for "${query}", best first]`,
  ];
  hits.forEach((hit, k) => {
    lines.push(
      `--- ${k + 1}. ref "${hit.ref}" (${describe(hit)}; chars ${count(hit.start)}-${count(hit.end)} of ${count(hit.totalChars)}, page ${hit.page})`,
      hit.text,
    );
  });
  lines.push('[read a whole text: recall {"ref": "<ref>", "page": <page>}]');
  return lines.join('\n');
}

/**
 * Runs one recall tool call for `sessionId`: by reference (a page of the original) or by
 * query (the best passages with their references). Never throws for a bad call: a refused
 * recall is an error result whose text says what to pass instead.
 *
 * @example
 * ```ts
 * const result = await runRecallTool(recall, 'chat-42', { ref: 'tool-3kf93jd02kd9' });
 * if (!result.isError) console.log(result.text);
 * ```
 */
export async function runRecallTool(
  recall: RecallArchive,
  sessionId: string,
  input: unknown,
): Promise<RecallToolResult> {
  const result = await answer(recall, sessionId, input);
  return { ...result, text: wellFormed(result.text) };
}

/** Half a surrogate pair with no other half. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` with every lone surrogate replaced by U+FFFD: an echo of the model's input cut at a
 * length (a ref, a key) can end in half an emoji, and a provider refuses a request holding
 * one ("The request body is not valid JSON: no low surrogate in string").
 */
function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd');
}

async function answer(recall: RecallArchive, sessionId: string, input: unknown): Promise<RecallToolResult> {
  try {
    const parsed = parseRecallInput(input);
    if (typeof parsed.ref === 'string') {
      const page = await recall.read(sessionId, parsed.ref, parsed.page ?? 1, parsed.page_chars ?? undefined);
      return { text: formatRecallPage(page), isError: false };
    }
    const query = parsed.query ?? '';
    const hits = await recall.search(sessionId, query, parsed.limit ?? undefined);
    return { text: formatRecallHits(query, hits), isError: false };
  } catch (error) {
    if (isRecallError(error))
      return { text: `recall error (${error.code}): ${error.message}`, isError: true, code: error.code };
    return {
      text: 'recall error (archive_unreadable): the archive could not be read; try again later',
      isError: true,
      code: 'archive_unreadable',
    };
  }
}

/** Resolves a {@link RecallSession} for one call; throws when it gives no session id. */
export function resolveRecallSession<C>(session: RecallSession<C>, context: C): string {
  const id = typeof session === 'function' ? session(context) : session;
  if (typeof id !== 'string' || id === '') throw new TypeError('the recall tool needs a non-empty sessionId');
  return id;
}
