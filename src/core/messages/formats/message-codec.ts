import { invalidMessage } from '../../errors.js';
import type { CompactMessage, MessageFormat, ToolCall, ToolResult } from '../message.js';

/** A parsed message before it gets its position-dependent `id` and `index`. */
export type ParsedMessage = Omit<CompactMessage, 'id' | 'index'> & {
  /** An id the message carries itself (item id, tool call id, `meta.id`). */
  explicitId?: string;
};

/**
 * Converts one wire format to and from the internal model. `parse` validates and throws
 * `invalid_messages` naming the index and field; `toWire` writes a message back (the
 * caller's own object, minus `meta`, when it came from this format).
 */
export interface MessageCodec {
  readonly format: MessageFormat;
  parse(raw: unknown, index: number): ParsedMessage;
  toWire(message: CompactMessage): unknown;
  /** The wire object of a summary message. */
  summaryMessage(text: string): unknown;
  /** The role summary messages have in this format (only that role is read as a summary). */
  readonly summaryRole: 'assistant' | 'user';
}

/**
 * The tool calls and results of a message that has none, shared by every parse (frozen): an
 * empty array of its own per message was two more objects for every scavenge of a cold index
 * to copy (issue 47). Codecs assign a new array when there is one.
 */
export const NO_TOOL_CALLS: ToolCall[] = Object.freeze([]) as unknown as ToolCall[];
export const NO_TOOL_RESULTS: ToolResult[] = Object.freeze([]) as unknown as ToolResult[];

/** Returns `raw` without its `meta` key (a shallow copy only when there is one). */
export function stripMeta(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || !('meta' in raw)) return raw;
  const { meta: _meta, ...rest } = raw as Record<string, unknown>;
  return rest;
}

/** `raw` as an object; else throws `invalid_messages` naming `index` ("must be an object"). */
export function messageObject(raw: unknown, index: number): Record<string, unknown> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw invalidMessage(index, '', 'must be an object');
  }
  return raw as Record<string, unknown>;
}

/** Gives `parsed` the message's `meta` (when it has one) and its `meta.id` as its own id. */
export function withMeta(parsed: ParsedMessage, meta: Record<string, unknown> | undefined): ParsedMessage {
  if (meta) {
    parsed.meta = meta;
    if (typeof meta.id === 'string') parsed.explicitId = meta.id;
  }
  return parsed;
}

/** The fields of `meta` this library reads, with the type each must have. */
const META_FIELDS = [
  ['protected', 'boolean'],
  ['id', 'string'],
  ['label', 'string'],
] as const;

/**
 * The message's `meta` (`undefined` when absent or `null`). A `meta` that is not an object, or
 * whose `protected`, `id` or `label` has the wrong type, throws `invalid_messages` naming the
 * field: read as no `meta`, a `meta: 'protected'` left a policy unprotected without a word.
 */
export function readMeta(raw: Record<string, unknown>, index: number): Record<string, unknown> | undefined {
  const meta = raw.meta;
  if (meta === undefined || meta === null) return undefined;
  if (typeof meta !== 'object' || Array.isArray(meta)) {
    throw invalidMessage(
      index,
      'meta',
      `must be an object (got ${Array.isArray(meta) ? 'array' : typeof meta})`,
    );
  }
  const fields = meta as Record<string, unknown>;
  for (const [field, type] of META_FIELDS) {
    const value = fields[field];
    if (value !== undefined && typeof value !== type)
      throw invalidMessage(index, `meta.${field}`, `must be a ${type} (got ${typeof value})`);
  }
  return fields;
}
/** Joins the text of content parts (`text`, `input_text`, `output_text`, `refusal`); marks others. */
export function partsText(parts: readonly unknown[]): string {
  const out: string[] = [];
  for (const part of parts) {
    if (typeof part === 'string') {
      out.push(part);
      continue;
    }
    if (part === null || typeof part !== 'object') continue;
    const p = part as Record<string, unknown>;
    if (typeof p.text === 'string') out.push(p.text);
    else if (typeof p.refusal === 'string') out.push(p.refusal);
    else if (typeof p.type === 'string') out.push(`[${p.type}]`);
  }
  return out.join('\n');
}
