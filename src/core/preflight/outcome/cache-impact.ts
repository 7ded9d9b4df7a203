/**
 * What a compaction does to the provider's prompt cache: the request up to its first changed
 * message is still read from the cache; everything from there on is written anew by the next
 * request. Priced with the manager's price table, before (the request as it was, read from a
 * warm cache) and after (the kept prefix read, the rest written).
 */
import type { CachePrice } from '../../counting/session-cost.js';
import type { MessageFormat } from '../../messages/message.js';
import type { PreparedRequest } from '../prepare-request.js';
import type { CascadeResult } from '../run-cascade.js';
import type { ViewEntry } from '../view/session-view.js';
import { assemble } from './assemble.js';

/** The cache figures of one compaction (on `compact.pruned_messages`). */
export interface CacheImpact {
  /** Request tokens the compaction freed. */
  tokensFreed: number;
  /** Tokens before the first changed message (tools and system prompt included): still cached. */
  prefixKeptTokens: number;
  /** Tokens from the first changed message on: a cache write on the next request. */
  rewrittenTokens: number;
  /** The next request's input without compaction, in base-price tokens (all read from the cache). */
  billedNextBefore: number;
  /** The same with the compaction: the kept prefix read, the rest written. */
  billedNextAfter: number;
}

/** One side of a compaction: the view's entries, its summary message and the request's size. */
export interface RequestSide {
  readonly entries: readonly ViewEntry[];
  readonly summaryWire: unknown;
  readonly summaryTokens: number;
  readonly tokens: number;
}

/** The wires as sent, each with its tokens. */
function sentMessages(side: RequestSide, format: MessageFormat): { wire: unknown; tokens: number }[] {
  const tokensOf = new Map<unknown, number>(side.entries.map((entry) => [entry.wire, entry.tokens]));
  return assemble(side.entries, side.summaryWire, format).map((wire) => ({
    wire,
    tokens: wire === side.summaryWire ? side.summaryTokens : (tokensOf.get(wire) ?? 0),
  }));
}

/** Whether two sent messages are the same bytes (the summary message is rebuilt per call). */
function sameMessage(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The cache figures of turning `before` into `after` (in the request's token units). */
export function cacheImpact(
  before: RequestSide,
  after: RequestSide,
  format: MessageFormat,
  price: CachePrice,
): CacheImpact {
  const was = sentMessages(before, format);
  const now = sentMessages(after, format);
  // Tools and the system prompt come before the messages and do not change.
  let prefix = after.tokens - now.reduce((sum, message) => sum + message.tokens, 0);
  for (let k = 0; k < Math.min(was.length, now.length); k++) {
    if (!sameMessage(was[k]!.wire, now[k]!.wire)) break;
    prefix += now[k]!.tokens;
  }
  const prefixKeptTokens = Math.max(0, Math.min(prefix, after.tokens));
  const rewrittenTokens = after.tokens - prefixKeptTokens;
  const round = (value: number) => Math.round(value * 100) / 100;
  return {
    tokensFreed: before.tokens - after.tokens,
    prefixKeptTokens,
    rewrittenTokens,
    billedNextBefore: round(before.tokens * price.cacheRead),
    billedNextAfter: round(prefixKeptTokens * price.cacheRead + rewrittenTokens * price.cacheWrite),
  };
}

/** The compaction's effect on the prompt cache, in the request's (calibrated) units. */
export function compactionCacheImpact(
  price: CachePrice,
  prepared: PreparedRequest,
  cascade: CascadeResult,
  summaryWire: unknown,
): CacheImpact {
  const { view } = prepared;
  const local = cacheImpact(
    {
      entries: view.entries,
      summaryWire: view.version > 0 ? prepared.summaryWire : undefined,
      summaryTokens: prepared.summaryTokens,
      tokens: prepared.localTokensBefore,
    },
    {
      entries: cascade.entries,
      summaryWire,
      summaryTokens: cascade.summary?.tokens ?? prepared.summaryTokens,
      tokens: cascade.tokensAfter,
    },
    prepared.codec.format,
    price,
  );
  const scaled = (value: number) => Math.round(value * prepared.scale);
  return {
    tokensFreed: scaled(local.tokensFreed),
    prefixKeptTokens: scaled(local.prefixKeptTokens),
    rewrittenTokens: scaled(local.rewrittenTokens),
    billedNextBefore: scaled(local.billedNextBefore),
    billedNextAfter: scaled(local.billedNextAfter),
  };
}
