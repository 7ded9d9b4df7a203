/**
 * Turns a {@link SessionRewrite} into the message sent: the placeholder of a cleared tool
 * result, the shortened arguments of a call, the head and tail of a cut message. The same
 * rewrite of the same message always gives the same text.
 */

import type { Positional } from '../../chunked-list.js';
import type { TokenCounter } from '../../counting/token-counter.js';
import { formatCount } from '../../format-count.js';
import {
  type FoundIdentifier,
  findIdentifiers,
  findIdentifiersSteps,
} from '../../language/key-identifiers.js';
import type { MessageCodec } from '../../messages/formats/message-codec.js';
import { hashLanes, hashString } from '../../messages/hash-string.js';
import { entryTokens, type IndexedMessage } from '../../messages/message-index.js';
import type { ToolPairer } from '../../messages/tool-pairing.js';
import type { SessionRewrite } from '../../session/session-store.js';
import type { Steps } from '../../time-slice.js';
import { cutLongestText, replaceToolResults, shortenToolArguments } from '../cascade/rewrite-message.js';
import type { RealizedRewrite } from './session-view.js';

/** Archive reference of a rewrite of message `id`: `tool-…`, `args-…` or `cut-…`. */
export function rewriteRef(kind: SessionRewrite['kind'], id: string): string {
  const prefix = kind === 'cleared' ? 'tool' : kind === 'shortened' ? 'args' : 'cut';
  // The prefix inside the hash's own flat string: one string per rewritten message, not three.
  return hashString(`${kind}\u0000${id}`, 0, `${prefix}-`);
}

/** The one-line placeholder of a cleared tool result. */
export function clearedPlaceholder(
  toolName: string,
  chars: number,
  ref: string | undefined,
  output = '',
): string {
  const ids = placeholderIds(output);
  const named = ids.length > 0 ? `; ids: ${ids.join(', ')}` : '';
  const recall = ref === undefined ? '' : `; recall "${ref}"`;
  // Joined, not a template: one flat string, where a template leaves a tree of concatenations
  // (six strings per cleared message, each kept with the view and copied by scavenges: issue 47).
  return ['[cleared: ', toolName, ' output, ', formatCount(chars), ' chars', named, recall, ']'].join('');
}

/**
 * Up to four identifiers of a cleared output the agent may still act on: tickets, UUIDs, paths,
 * file names and URLs (not every code-like word: a placeholder stays in every later request,
 * so each word of it is paid for on every call).
 */
function placeholderIds(output: string): string[] {
  if (output === '') return [];
  if (readIds?.output === output) return readIds.ids;
  return idsOf(findIdentifiers(placeholderText(output), PLACEHOLDER_ID_LIMIT));
}

const PLACEHOLDER_ID_LIMIT = 24;
/** The part of an output its placeholder's ids are looked for in. */
const placeholderText = (output: string) => (output.length > 200_000 ? output.slice(0, 200_000) : output);
const idsOf = (found: readonly FoundIdentifier[]) =>
  found
    .filter((id) => ['ticket', 'uuid', 'path', 'file'].includes(id.kind) && id.text.length <= 40)
    .slice(0, 4)
    .map((id) => id.text);

/** The ids of the output read last ahead by {@link readPlaceholderIdsSteps} (until {@link forgetReadIds}). */
let readIds: { output: string; ids: string[] } | undefined;

/** Outputs from this length have their placeholder's ids read ahead in steps. */
export const READ_IDS_AHEAD_CHARS = 32_768;

/**
 * Reads the ids of `output`'s placeholder ahead, in steps ({@link findIdentifiersSteps}): the
 * placeholder built next from this output takes them (the same ids) instead of one long scan.
 */
export function* readPlaceholderIdsSteps(output: string): Steps<void> {
  const ids = idsOf(yield* findIdentifiersSteps(placeholderText(output), PLACEHOLDER_ID_LIMIT));
  readIds = { output, ids };
}

/** Drops the ids read ahead (and the reference to their output, which may be megabytes). */
export function forgetReadIds(): void {
  readIds = undefined;
}

/** The marker left where text was removed. */
export function cutMarker(removed: number, ref: string | undefined): string {
  const recall = ref === undefined ? '' : `; full text: recall ref "${ref}"`;
  return ['[agent-compaction: ', formatCount(removed), ' chars cut here', recall, ']'].join('');
}

/** The name of the tool whose call result `position` of `item` answers. */
export function toolNameOf(
  item: IndexedMessage,
  position: number,
  pairer: ToolPairer,
  items: Positional<IndexedMessage>,
): string {
  const site = pairer.callSite(item.index, position);
  if (!site) return 'unknown';
  return items.at(site.message)?.entry.parsed.toolCalls[site.position]?.name ?? 'unknown';
}

/** What realizing a rewrite needs. */
export interface RewriteContext {
  readonly codec: MessageCodec;
  readonly counter: TokenCounter;
  readonly pairer: ToolPairer;
  readonly items: Positional<IndexedMessage>;
  /**
   * Whether originals are archived under their refs: without an archive (no storage) a
   * placeholder names no recall ref, since recall could not find it.
   */
  readonly archived?: boolean;
}

function countWire(context: RewriteContext, wire: unknown, index: number): number {
  const parsed = context.codec.parse(wire, index);
  return context.counter.countMessage({ ...parsed, id: '', index });
}

/** Builds the wire message of `rewrite` applied to `item`, with its tokens. */
export function realizeRewrite(
  context: RewriteContext,
  item: IndexedMessage,
  rewrite: SessionRewrite,
): RealizedRewrite {
  const parsed = item.entry.parsed;
  const raw = item.entry.wire;
  const ref = context.archived === false || rewrite.unarchived ? undefined : rewrite.ref;
  let wire: unknown;
  if (rewrite.kind === 'cleared') {
    const positions = parsed.toolResults.map((_, i) => i);
    wire = replaceToolResults(raw, parsed.format, positions, (position) =>
      clearedPlaceholder(
        toolNameOf(item, position, context.pairer, context.items),
        parsed.toolResults[position]?.output.length ?? 0,
        ref,
        parsed.toolResults[position]?.output ?? '',
      ),
    );
  } else if (rewrite.kind === 'shortened') {
    const positions = parsed.toolCalls.map((_, i) => i);
    wire = shortenToolArguments(raw, parsed.format, positions, rewrite.keepChars ?? 1000, (removed) =>
      cutMarker(removed, ref),
    );
  } else {
    wire = cutLongestText(raw, rewrite.keepChars ?? 1000, (removed) => cutMarker(removed, ref))?.wire;
  }
  // Nothing to rewrite: the message as indexed, its count from the index.
  if (wire === undefined) return { wire: raw, tokens: entryTokens(item, context.counter) };
  return { wire, tokens: countWire(context, wire, item.index) };
}

/** The cache key of a rewrite of a message: a 32-bit hash (a small integer, no object of its own). */
function rewriteKey(format: string, item: IndexedMessage, rewrite: SessionRewrite): number {
  const lanes = hashLanes(
    [
      format,
      item.entry.hash,
      item.id,
      rewrite.kind,
      String(rewrite.ref),
      String(rewrite.keepChars ?? ''),
      rewrite.unarchived ? '1' : '0',
    ].join('\u0000'),
  );
  return lanes[1]! | 0;
}

const KINDS: readonly SessionRewrite['kind'][] = ['cleared', 'shortened', 'cut'];
/** Numbers kept per slot besides its tokens: hash high lane, hash low lane, keepChars (-1: none), kind and unarchived. */
const NUMBERS = 4;

/**
 * Caches realized rewrites by message and rewrite (bounded), in columns: a slot per realized
 * rewrite, its wire, message id, ref and format in arrays, its numbers in an Int32Array and its tokens in a Float64Array, found
 * by a 32-bit hash of what it was made from (a small integer: the fields are checked on a hit,
 * as two rewrites may share a key). A key string and a record per rewritten message were two
 * objects alive per cleared tool result of a history, copied by every scavenge of a cold call
 * (issue 47).
 */
export class RewriteCache {
  readonly #slots = new Map<number, number>();
  readonly #max: number;
  #wires: unknown[] = [];
  #ids: string[] = [];
  #refs: (string | undefined)[] = [];
  #formats: string[] = [];
  #numbers = new Int32Array(NUMBERS * 64);
  #tokens = new Float64Array(64);

  constructor(max = 20_000) {
    this.#max = max;
  }

  /** Drops every realized rewrite. */
  clear(): void {
    this.#slots.clear();
    this.#wires = [];
    this.#ids = [];
    this.#refs = [];
    this.#formats = [];
    this.#numbers = new Int32Array(NUMBERS * 64);
    this.#tokens = new Float64Array(64);
  }

  /** Drops the realized rewrites of `items` (a session that ended); one pass over the cache. */
  forget(items: Iterable<IndexedMessage> & { readonly length: number }): void {
    if (items.length === 0 || this.#slots.size === 0) return;
    const ids = new Set<string>();
    for (const item of items) ids.add(`${item.entry.hashHigh},${item.entry.hashLow},${item.id}`);
    const numbers = this.#numbers;
    for (const [key, slot] of this.#slots) {
      const at = NUMBERS * slot;
      if (!ids.has(`${numbers[at]},${numbers[at + 1]},${this.#ids[slot]}`)) continue;
      this.#slots.delete(key);
      // The slot stays (a later rewrite under another key takes a new one; `clear` resets all),
      // its wire no longer held.
      this.#wires[slot] = undefined;
    }
  }

  /** Whether `slot` was made from this message and rewrite. */
  #matches(slot: number, format: string, item: IndexedMessage, rewrite: SessionRewrite): boolean {
    const numbers = this.#numbers;
    const at = NUMBERS * slot;
    const flags = numbers[at + 3]!;
    return (
      this.#formats[slot] === format &&
      numbers[at] === item.entry.hashHigh &&
      numbers[at + 1] === item.entry.hashLow &&
      this.#ids[slot] === item.id &&
      KINDS[flags >> 1] === rewrite.kind &&
      this.#refs[slot] === rewrite.ref &&
      numbers[at + 2] === (rewrite.keepChars ?? -1) &&
      (flags & 1) === (rewrite.unarchived ? 1 : 0)
    );
  }

  /** The realized rewrite, computed once per (message, rewrite, format). */
  get(context: RewriteContext, item: IndexedMessage, rewrite: SessionRewrite): RealizedRewrite {
    const format = context.codec.format;
    const key = rewriteKey(format, item, rewrite);
    let slot = this.#slots.get(key);
    if (slot !== undefined && this.#matches(slot, format, item, rewrite))
      return { wire: this.#wires[slot], tokens: this.#tokens[slot]! };
    const realized = realizeRewrite(context, item, rewrite);
    const keepChars = rewrite.keepChars;
    // A count that does not fit the columns (none should) is not cached.
    if (keepChars !== undefined && (keepChars < 0 || keepChars > 0x7fffffff)) return realized;
    if (slot === undefined) {
      if (this.#slots.size >= this.#max || this.#ids.length >= 2 * this.#max) this.clear();
      slot = this.#ids.length;
      if (slot >= this.#tokens.length) {
        const numbers = new Int32Array(2 * this.#numbers.length);
        numbers.set(this.#numbers);
        this.#numbers = numbers;
        const tokens = new Float64Array(2 * this.#tokens.length);
        tokens.set(this.#tokens);
        this.#tokens = tokens;
      }
      this.#slots.set(key, slot);
    }
    this.#wires[slot] = realized.wire;
    this.#ids[slot] = item.id;
    this.#refs[slot] = rewrite.ref;
    this.#formats[slot] = format;
    const at = NUMBERS * slot;
    this.#tokens[slot] = realized.tokens;
    this.#numbers[at] = item.entry.hashHigh;
    this.#numbers[at + 1] = item.entry.hashLow;
    this.#numbers[at + 2] = keepChars ?? -1;
    this.#numbers[at + 3] = (KINDS.indexOf(rewrite.kind) << 1) | (rewrite.unarchived ? 1 : 0);
    return realized;
  }
}
