/**
 * The internal message model. Every supported wire format converts into it and back;
 * the engine (counting, partitioning, summarizing) only ever sees these.
 */

import { releaseRegExpCode } from '../process-caches.js';
import { defuseSummaryMarkup } from '../summary/summary-markup.js';

/** The wire formats agent-compaction reads and writes. */
export type MessageFormat = 'openai-chat' | 'openai-responses' | 'anthropic';

/** Conversational role of a message. `tool` carries tool results in the OpenAI Chat format. */
export type MessageRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

/**
 * What a message is, independent of its format.
 *
 * - `message`: ordinary text (possibly with tool calls or tool results attached).
 * - `reasoning`: a reasoning item (Responses `reasoning`); it belongs to the item after it.
 * - `other`: any item type the engine does not interpret (kept intact, never split from
 *   its neighbours when it carries a call id).
 */
export type MessageKind = 'message' | 'reasoning' | 'other';

/** A tool call issued by an assistant message or item. */
export interface ToolCall {
  /** The call id that its result refers to (`tool_call_id`, `call_id`, `tool_use_id`). */
  id: string;
  /** The tool's name. */
  name: string;
  /** The arguments as text (JSON for most providers). */
  arguments: string;
}

/** A tool result carried by a message or item. */
export interface ToolResult {
  /** The id of the call this result answers. */
  callId: string;
  /** The result as text. */
  output: string;
  /** True when the tool reported an error. */
  isError?: boolean;
}

/** Metadata a caller may attach to any message as `meta`; stripped before sending. */
export interface MessageMeta {
  /** Never prune or summarize this message (the flag name is `policy.protectedFlag`). */
  protected?: boolean;
  /** A human label, shown in events and reports. */
  label?: string;
  /** A stable id for this message; otherwise one is derived from its content. */
  id?: string;
  [key: string]: unknown;
}

/**
 * A message of any format with the optional `meta` the manager reads (and strips before
 * sending): `WithMeta<ChatCompletionMessageParam>`, `WithMeta<Anthropic.MessageParam>`, ...
 * The result of `preflight` keeps the type, so it goes to the SDK without a cast.
 *
 * @example
 * ```ts
 * const history: WithMeta<ChatCompletionMessageParam>[] = [];
 * history.push({ role: 'developer', content: POLICY, meta: { protected: true, label: 'Security Policy' } });
 * ```
 */
export type WithMeta<M> = M & { meta?: MessageMeta };

/**
 * One message or item in the internal model.
 *
 * `raw` is the caller's original object: converters write it back unchanged (minus `meta`),
 * which is what makes every conversion lossless.
 */
export interface CompactMessage {
  /** Stable identity: `meta.id`, the item's own id, or a content hash plus occurrence. */
  id: string;
  /** Conversational role. */
  role: MessageRole;
  /** What kind of entry this is. */
  kind: MessageKind;
  /** The plain text of the message (text parts joined), used for counting and summaries. */
  text: string;
  /** Tool calls this message issues. */
  toolCalls: ToolCall[];
  /** Tool results this message carries. */
  toolResults: ToolResult[];
  /** The caller's metadata, if any. */
  meta?: MessageMeta;
  /** Position in the caller's array. */
  index: number;
  /** The format `raw` is in. */
  format: MessageFormat;
  /** The caller's original object, never mutated. */
  raw: unknown;
  /** For `other` items: the item's `type`. */
  itemType?: string;
  /**
   * Set when the message is or carries a provider compaction (a Responses `compaction` item,
   * an Anthropic `compaction` block): `boundary` when the provider reads it in place of
   * everything before it, `inert` for an Anthropic block without a summary (a no-op). Such a
   * message is pinned; see formats/provider-compaction.ts.
   */
  providerCompaction?: 'boundary' | 'inert';
}

/** The opening tag of a summary message; `N` is the session's compaction count. */
export const SUMMARY_TAG_PATTERN = /^<COMPACT-SUMMARY v(\d+)>/;

/** Builds the opening tag of summary version `version`. */
export function summaryTag(version: number): string {
  return `<COMPACT-SUMMARY v${version}>`;
}

/** The closing tag written after a summary's body. */
export const SUMMARY_CLOSING_TAG = '</COMPACT-SUMMARY>';

/** Returns the version of a summary message, or `undefined` when `text` is not one. */
export function summaryVersionOf(text: string): number | undefined {
  const match = SUMMARY_TAG_PATTERN.exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * The line before the closing tag that carries a summary's mark (see
 * `core/summary/summary-mark.ts`): 39 digits, an HMAC the manager verifies (22 base64url
 * characters in summaries written before).
 */
const MARK_LINE = /\n\[summary-mark (\d{39}|[A-Za-z0-9_-]{22})\]\s*$/;

/** The body and the mark of a summary message's text (tags and mark line stripped). */
export function readSummaryText(text: string): { body: string; mark: string | undefined } {
  let body = text.replace(SUMMARY_TAG_PATTERN, '');
  const close = body.lastIndexOf(SUMMARY_CLOSING_TAG);
  if (close >= 0) body = body.slice(0, close);
  // Bounded: the mark line is looked for in the last 64 characters only.
  const tailStart = Math.max(0, body.length - 64);
  const match = MARK_LINE.exec(body.slice(tailStart));
  if (match) body = body.slice(0, tailStart + match.index);
  return { body: body.trim(), mark: match?.[1] };
}

/**
 * True when `text` is exactly the summary message {@link formatSummaryText} writes for its own
 * version, body and mark: nothing before the opening tag or after the closing tag, one line
 * each, the body already defused. Only such a text can be trusted as a summary; anything else
 * that carries a summary (text before or after it in the same message, another block) is the
 * caller's content.
 */
export function isExactSummaryText(text: string): boolean {
  const version = summaryVersionOf(text);
  if (version === undefined) return false;
  const { body, mark } = readSummaryText(text);
  return text === formatSummaryText(version, body, mark);
}

/**
 * Where the first summary (`<COMPACT-SUMMARY vN>` up to the next closing tag) sits in `text`,
 * and its version: the part a mark can sign when a framework merged the summary with other
 * text (a user turn after it, a reminder before it). Linear time.
 */
export function findSummarySpan(text: string): { start: number; end: number; version: number } | undefined {
  const start = text.indexOf('<COMPACT-SUMMARY v');
  if (start < 0) return undefined;
  const version = summaryVersionOf(text.slice(start, start + 32));
  if (version === undefined) return undefined;
  const close = text.indexOf(SUMMARY_CLOSING_TAG, start);
  const end = close < 0 ? text.length : close + SUMMARY_CLOSING_TAG.length;
  return { start, end, version };
}

/** Strips the tags (and the mark line) from a summary message's text, leaving the body. */
export function summaryBody(text: string): string {
  return readSummaryText(text).body;
}

/**
 * Wraps a summary body in its tags. The body is data, never markup: library tags inside it
 * (`<COMPACT-SUMMARY ...>`, `</COMPACT-SUMMARY>`, `<history>`, ... in any case or look-alike
 * form) are defused first, so the message has exactly one opening and one closing tag.
 */
export function formatSummaryText(version: number, body: string, mark?: string): string {
  const markLine = mark === undefined ? '' : `[summary-mark ${mark}]\n`;
  return `${summaryTag(version)}\n${defuseSummaryMarkup(body.trim())}\n${markLine}${SUMMARY_CLOSING_TAG}`;
}

/** The opening tag of a local summary (see {@link formatLocalSummaryText}). */
export const LOCAL_SUMMARY_TAG = '<COMPACT-LOCAL-SUMMARY>';

/**
 * Wraps the body of a local summary: one made while the session store could not take it (an
 * outage, or a store that kept changing under the compaction). It claims no version and
 * carries no mark, so it is never trusted as the session's summary: handed back in a persisted
 * view it is the caller's content, folded into the next real summary like any message.
 */
export function formatLocalSummaryText(body: string): string {
  return `${LOCAL_SUMMARY_TAG}\n${defuseSummaryMarkup(body.trim())}\n</COMPACT-LOCAL-SUMMARY>`;
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(SUMMARY_TAG_PATTERN, MARK_LINE);
