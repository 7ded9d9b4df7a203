/**
 * What a session's model calls cost under prompt caching. Providers bill a cached prefix at a
 * fraction of the input price and a cache write at a premium, so the figure that matters is
 * not how many tokens were sent but how many were read from the cache, written to it, or sent
 * uncached. Each reported usage is split that way and priced in *billed-equivalent input
 * tokens*: tokens at the model's base input price (an uncached input token costs 1).
 */
import { invalidConfig } from '../errors.js';
import type { CompactEventProperties } from '../events/events.js';

/** Multipliers of a model's base input price. */
export interface CachePrice {
  /** A cached input token read (Anthropic cache read, OpenAI cached token). */
  cacheRead: number;
  /** An input token written to the cache (Anthropic cache creation; OpenAI writes at 1). */
  cacheWrite: number;
  /** An output token. */
  output: number;
}

/**
 * Default price multipliers by model-name prefix (the longest matching prefix wins), from the
 * providers' published prices: Anthropic models read the cache at 0.1x, write it at 1.25x (the
 * 5-minute cache) and bill output at 5x; OpenAI models write at 1x, read at 0.5x (gpt-4o),
 * 0.25x (gpt-4.1, o3, o4) or 0.1x (gpt-5), output at 4x or 8x. A model no prefix matches is
 * priced as `openai`. Override or extend with the manager's `pricing` option.
 */
export const DEFAULT_CACHE_PRICES: Readonly<Record<string, CachePrice>> = Object.freeze({
  claude: { cacheRead: 0.1, cacheWrite: 1.25, output: 5 },
  openai: { cacheRead: 0.1, cacheWrite: 1, output: 8 },
  'gpt-4o': { cacheRead: 0.5, cacheWrite: 1, output: 4 },
  'gpt-4.1': { cacheRead: 0.25, cacheWrite: 1, output: 4 },
  o3: { cacheRead: 0.25, cacheWrite: 1, output: 4 },
  'o4-mini': { cacheRead: 0.25, cacheWrite: 1, output: 4 },
  'gpt-5': { cacheRead: 0.1, cacheWrite: 1, output: 8 },
});

/** The price of `model`: the longest prefix of `prices` (defaults, then overrides) it starts with. */
export function cachePriceFor(
  model: string,
  overrides: Readonly<Record<string, CachePrice>> = {},
): CachePrice {
  const table = { ...DEFAULT_CACHE_PRICES, ...overrides };
  let best: string | undefined;
  for (const prefix of Object.keys(table)) {
    if (model.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix;
  }
  return table[best ?? 'openai'] ?? DEFAULT_CACHE_PRICES.openai!;
}

/** Checks a `pricing` option: each entry three non-negative finite multipliers. */
export function checkPricing(pricing: unknown): Record<string, CachePrice> {
  if (pricing === undefined) return {};
  if (pricing === null || typeof pricing !== 'object' || Array.isArray(pricing))
    throw invalidConfig('pricing', 'must be an object of model-name prefixes to price multipliers');
  for (const [prefix, price] of Object.entries(pricing)) {
    for (const field of ['cacheRead', 'cacheWrite', 'output'] as const) {
      const value = (price as Partial<CachePrice> | undefined)?.[field];
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        throw invalidConfig(`pricing.${prefix}.${field}`, 'must be a non-negative number');
    }
  }
  return pricing as Record<string, CachePrice>;
}

/** One request's usage, split by how the provider bills it. */
export interface UsageSplit {
  /** All input tokens of the request, cache reads and writes included. */
  input: number;
  /** Input tokens read from the cache. */
  cacheRead: number;
  /** Input tokens written to the cache (billed at the write price). */
  cacheWrite: number;
  /** Input tokens neither read from nor written to the cache. */
  uncached: number;
  output: number;
}

/** The counts of a reported usage (the fields of `ReportedUsage`). */
export interface UsageCounts {
  inputTokens: number;
  cachedInputTokens?: number | undefined;
  cacheReadInputTokens?: number | undefined;
  cacheCreationInputTokens?: number | undefined;
  outputTokens?: number | undefined;
}

/**
 * Splits a reported usage. Anthropic reports `input_tokens` *beside* its cache reads and
 * writes; OpenAI reports `prompt_tokens` / `input_tokens` *including* its cached tokens
 * (`cachedInputTokens` here): both come out as the same four figures.
 */
export function splitUsage(usage: UsageCounts): UsageSplit {
  const read = usage.cacheReadInputTokens ?? 0;
  const write = usage.cacheCreationInputTokens ?? 0;
  const cachedInside = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  return {
    input: usage.inputTokens + read + write,
    cacheRead: read + cachedInside,
    cacheWrite: write,
    uncached: usage.inputTokens - cachedInside,
    output: usage.outputTokens ?? 0,
  };
}

/** Billed-equivalent input tokens of one request's usage. */
export function billedEquivalent(split: UsageSplit, price: CachePrice): number {
  return (
    split.uncached +
    split.cacheRead * price.cacheRead +
    split.cacheWrite * price.cacheWrite +
    split.output * price.output
  );
}

/**
 * A session's cost so far (`CompactManager.costSnapshot`): its reported requests, their input
 * split into cache reads, cache writes and uncached tokens, the hit share, the compactions that
 * rewrote the prefix, and billed-equivalent input tokens priced by the `pricing` table.
 */
export interface SessionCost {
  /** Requests whose usage was reported. */
  requests: number;
  /** Input tokens of those requests, cache included. */
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  uncachedTokens: number;
  outputTokens: number;
  /** Share of the input read from the cache (0 to 1). */
  hitShare: number;
  /** Compactions that rewrote the view (each one a new prefix: a cache write of what follows). */
  prefixRewrites: number;
  /** What the requests cost, in input tokens at the model's base price. */
  billedInputEquivalent: number;
  /** The multipliers used. */
  price: CachePrice;
}

const empty = (price: CachePrice): SessionCost => ({
  requests: 0,
  inputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  uncachedTokens: 0,
  outputTokens: 0,
  hitShare: 0,
  prefixRewrites: 0,
  billedInputEquivalent: 0,
  price,
});

/** Per-session cost counters of one manager (freed with the session's memory). */
export class SessionCosts {
  readonly #costs = new Map<string, SessionCost>();

  /** Adds one request's usage; returns the request's split and billed figure. */
  record(sessionId: string, split: UsageSplit, price: CachePrice): { billed: number } {
    const cost = this.#costs.get(sessionId) ?? empty(price);
    const billed = billedEquivalent(split, price);
    cost.requests++;
    cost.inputTokens += split.input;
    cost.cacheReadTokens += split.cacheRead;
    cost.cacheWriteTokens += split.cacheWrite;
    cost.uncachedTokens += split.uncached;
    cost.outputTokens += split.output;
    cost.hitShare = cost.inputTokens > 0 ? cost.cacheReadTokens / cost.inputTokens : 0;
    cost.billedInputEquivalent += billed;
    cost.price = price;
    this.#costs.set(sessionId, cost);
    return { billed };
  }

  /** Counts a compaction that rewrote the session's view. */
  rewrite(sessionId: string, price: CachePrice): void {
    const cost = this.#costs.get(sessionId) ?? empty(price);
    cost.prefixRewrites++;
    this.#costs.set(sessionId, cost);
  }

  /** A copy of the session's figures, or undefined before its first report or rewrite. */
  snapshot(sessionId: string): SessionCost | undefined {
    const cost = this.#costs.get(sessionId);
    return cost && { ...cost, price: { ...cost.price } };
  }

  delete(sessionId: string): void {
    this.#costs.delete(sessionId);
  }

  clear(): void {
    this.#costs.clear();
  }
}

/** A reported usage checked (each count a non-negative finite number) and split. */
export function checkedUsage(usage: UsageCounts): UsageSplit {
  const fields = [
    'inputTokens',
    'cachedInputTokens',
    'cacheReadInputTokens',
    'cacheCreationInputTokens',
    'outputTokens',
  ] as const;
  for (const field of fields) {
    const value = usage?.[field];
    if (value === undefined && field !== 'inputTokens') continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw invalidConfig(`usage.${field}`, 'must be a non-negative number');
  }
  return splitUsage(usage);
}

/** The `compact.usage` event of one reported request. */
export function usageEvent(
  split: UsageSplit,
  billed: number,
  session: SessionCost,
): CompactEventProperties['compact.usage'] {
  return {
    inputTokens: split.input,
    cacheReadTokens: split.cacheRead,
    cacheWriteTokens: split.cacheWrite,
    uncachedTokens: split.uncached,
    outputTokens: split.output,
    hitShare: split.input > 0 ? split.cacheRead / split.input : 0,
    billedInputEquivalent: billed,
    sessionBilledInputEquivalent: session.billedInputEquivalent,
    sessionHitShare: session.hitShare,
    prefixRewrites: session.prefixRewrites,
  };
}
