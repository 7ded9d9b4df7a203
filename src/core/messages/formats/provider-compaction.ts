/**
 * Provider-native compaction: the OpenAI Responses `compaction` item and the Anthropic
 * `compaction` content block. Both stand for the conversation before them and are pinned.
 * The Anthropic block is a boundary: the API drops what precedes the newest one, so that is
 * not counted. The OpenAI item is not: what the caller sends before it is counted.
 *
 * - OpenAI Responses (`POST /responses` with `context_management: [{ type: 'compaction',
 *   compact_threshold }]`, and `POST /responses/compact`): `{ type: 'compaction', id?,
 *   encrypted_content }` (openai `ResponseCompactionItemParam`). The guide
 *   (developers.openai.com/api/docs/guides/compaction, "Server-side compaction") says the
 *   latest compaction item "carries the necessary context to continue the conversation" and
 *   that the items before it can be dropped from the input (a latency tip for the client); it
 *   does not say the server ignores them when they are sent, so they are counted. The
 *   payload is opaque: counted by its length like encrypted reasoning
 *   (`ENCRYPTED_CHARS_PER_TOKEN`, 16/3 base64 characters per token), the only defensible
 *   figure without a documented one.
 * - Anthropic (`context_management.edits: [{ type: 'compact_20260112' }]`, beta
 *   `compact-2026-01-12`): `{ type: 'compaction', content: string | null, encrypted_content?,
 *   signature?, tool_changes? }` (`BetaCompactionBlockParam`). The compaction guide
 *   (platform.claude.com/docs/en/build-with-claude/compaction, "How compaction works") says
 *   the API "automatically drops all message blocks prior to the compaction block". The
 *   summary `content` is what the model reads and is counted as text; `encrypted_content` is
 *   opaque metadata sent back verbatim and, like a thinking block's `signature`, not counted.
 *   A block whose `content` is null is a failed compaction the server treats as a no-op: it is
 *   kept (pinned) but is no boundary.
 *
 * Anything that only looks like one (no payload, a payload of the wrong type, an empty
 * summary) is read as an opaque item: kept and counted as sent, never a boundary.
 */

import type { Positional } from '../../chunked-list.js';
import { runSteps, type Steps } from '../../time-slice.js';
import type { CompactMessage } from '../message.js';

/** How a message takes part in provider compaction. */
export type ProviderCompaction = NonNullable<CompactMessage['providerCompaction']>;

/** The state of a Responses item of type `compaction`, or `undefined` when it is malformed (opaque). */
export function responsesCompaction(item: Readonly<Record<string, unknown>>): ProviderCompaction | undefined {
  // Pinned, but no boundary: OpenAI documents dropping the items before it as something the
  // client may do (a latency tip), not that the server ignores them when they are sent, so
  // they are counted like any input (an over-count is safe, an under-count is not).
  return typeof item.encrypted_content === 'string' && item.encrypted_content.length > 0
    ? 'inert'
    : undefined;
}

/** An Anthropic `compaction` block read: its state and the summary text the model sees. */
export interface AnthropicCompactionBlock {
  state: ProviderCompaction;
  text: string;
}

/** Reads an Anthropic block of type `compaction`; `undefined` when it is malformed (opaque). */
export function anthropicCompactionBlock(
  block: Readonly<Record<string, unknown>>,
): AnthropicCompactionBlock | undefined {
  const content = block.content;
  if (content === null || content === undefined) return { state: 'inert', text: '' };
  if (typeof content === 'string' && content.length > 0) return { state: 'boundary', text: content };
  return undefined;
}

/** The minimum the boundary search needs to know about a message. */
export interface BoundaryInput {
  readonly entry: { readonly parsed: { readonly providerCompaction?: ProviderCompaction } };
}

/**
 * Position of the newest provider compaction boundary in `items`, or -1. Everything before it
 * is dropped by the provider: sent as the caller wrote it, never counted, never rewritten.
 */
export function newestBoundary(items: readonly BoundaryInput[]): number {
  return runSteps(newestBoundarySteps(items));
}

/** Items looked at between two pauses of {@link newestBoundarySteps}. */
const BOUNDARY_STEP = 4_096;

/**
 * {@link newestBoundary} as steps, a pause every {@link BOUNDARY_STEP} items (a cold call of
 * 300k messages held the loop on this scan), looking no lower than `from`: -1 when no
 * boundary sits at or after it (`Math.max(from, newestBoundary(items))` is then `from`).
 */
export function* newestBoundarySteps(items: Positional<BoundaryInput>, from = 0): Steps<number> {
  for (let i = items.length - 1, low = Math.max(0, from); i >= low; i--) {
    if (items.at(i)!.entry.parsed.providerCompaction === 'boundary') return i;
    if (i % BOUNDARY_STEP === 0) yield;
  }
  return -1;
}
