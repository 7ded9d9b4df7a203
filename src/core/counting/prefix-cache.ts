/**
 * The prompt cache a sequence of requests would have had, modeled (`replay`, the cost bench): each request's messages that equal the
 * previous request's, from the first on, are read from the cache (from 1,024 tokens, as both
 * providers cache); the rest is written (priced at the model's cache-write multiplier). It
 * counts how often compaction rewrote the prefix and what the requests bill in input tokens
 * at the base price, so replays of the same transcript under other policies compare.
 */
import type { CachePrice } from './session-cost.js';

/** What the modeled cache saw over a replay. */
export interface ModeledCache {
  /** Share of the input read from the cache (0 to 1). */
  hitShare: number;
  /** Requests whose prefix differed from the previous request's (a compaction's rewrite). */
  prefixRewrites: number;
  /** Input tokens at the base price: cache reads at the read price, the rest at the write price. */
  billedInputEquivalent: number;
  inputTokens: number;
}

const MIN_CACHED = 1024;

export class PrefixCacheTally {
  #previous: string[] = [];
  readonly #texts = new WeakMap<object, string>();
  readonly #tokens = new Map<string, number>();
  #input = 0;
  #cached = 0;
  #billed = 0;
  #rewrites = 0;

  constructor(
    readonly price: CachePrice,
    readonly countMessage: (message: unknown) => number,
  ) {}

  #text(message: unknown): string {
    if (message === null || typeof message !== 'object') return JSON.stringify(message);
    let text = this.#texts.get(message);
    if (text === undefined) {
      text = JSON.stringify(message);
      this.#texts.set(message, text);
    }
    return text;
  }

  /**
   * Adds one request (the messages sent); returns its tokens read from the cache (`prefix`),
   * its total, and whether it rewrote the previous request's prefix.
   */
  add(messages: readonly unknown[]): { prefix: number; total: number; rewrote: boolean } {
    const texts = messages.map((message) => this.#text(message));
    let shared = 0;
    while (
      shared < texts.length &&
      shared < this.#previous.length &&
      texts[shared] === this.#previous[shared]
    )
      shared++;
    const rewrote = this.#previous.length > 0 && shared < this.#previous.length;
    if (rewrote) this.#rewrites++;
    let prefix = 0;
    let total = 0;
    texts.forEach((text, k) => {
      let tokens = this.#tokens.get(text);
      if (tokens === undefined) {
        tokens = this.countMessage(messages[k]);
        if (this.#tokens.size > 50_000) this.#tokens.clear();
        this.#tokens.set(text, tokens);
      }
      total += tokens;
      if (k < shared) prefix += tokens;
    });
    if (prefix < MIN_CACHED) prefix = 0;
    this.#input += total;
    this.#cached += prefix;
    this.#billed += prefix * this.price.cacheRead + (total - prefix) * this.price.cacheWrite;
    this.#previous = texts;
    return { prefix, total, rewrote };
  }

  totals(): ModeledCache {
    return {
      hitShare: this.#input > 0 ? this.#cached / this.#input : 0,
      prefixRewrites: this.#rewrites,
      billedInputEquivalent: Math.round(this.#billed),
      inputTokens: this.#input,
    };
  }
}
