import { describe, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../events/events.js';
import { CompactManager } from '../manager/compact-manager.js';
import { billedEquivalent, cachePriceFor, DEFAULT_CACHE_PRICES, splitUsage } from './session-cost.js';

describe('cache figures and prices', () => {
  it('splits Anthropic usage (cache beside input) and OpenAI usage (cached inside input) alike', () => {
    // Anthropic: input_tokens 200, cache_read 9,000, cache_creation 800.
    const anthropic = splitUsage({
      inputTokens: 200,
      cacheReadInputTokens: 9_000,
      cacheCreationInputTokens: 800,
    });
    // OpenAI: prompt_tokens 10,000 of which cached_tokens 9,000.
    const openai = splitUsage({ inputTokens: 10_000, cachedInputTokens: 9_000, outputTokens: 50 });
    expect(anthropic).toEqual({ input: 10_000, cacheRead: 9_000, cacheWrite: 800, uncached: 200, output: 0 });
    expect(openai).toEqual({ input: 10_000, cacheRead: 9_000, cacheWrite: 0, uncached: 1_000, output: 50 });
    // More cached than input (a proxy's rounding) never gives negative uncached input.
    expect(splitUsage({ inputTokens: 10, cachedInputTokens: 20 }).uncached).toBe(0);
  });

  it('prices by the longest model prefix, overrides first', () => {
    expect(cachePriceFor('claude-sonnet-4-6')).toEqual({ cacheRead: 0.1, cacheWrite: 1.25, output: 5 });
    expect(cachePriceFor('gpt-4o-mini').cacheRead).toBe(0.5);
    expect(cachePriceFor('gpt-4.1-mini').cacheRead).toBe(0.25);
    expect(cachePriceFor('some-local-model')).toEqual(DEFAULT_CACHE_PRICES.openai);
    expect(
      cachePriceFor('claude-opus-4', { 'claude-opus': { cacheRead: 0.2, cacheWrite: 2, output: 5 } })
        .cacheRead,
    ).toBe(0.2);
    const split = splitUsage({
      inputTokens: 200,
      cacheReadInputTokens: 9_000,
      cacheCreationInputTokens: 800,
      outputTokens: 100,
    });
    // 200 + 9,000 x 0.1 + 800 x 1.25 + 100 x 5
    expect(billedEquivalent(split, cachePriceFor('claude-sonnet-4-6'))).toBeCloseTo(2_600, 6);
  });
});

describe('CompactManager.costSnapshot', () => {
  it('sums reported usage per session, counts prefix rewrites, emits compact.usage, frees on endSession', async () => {
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: 4_000 });
    const events: AnyCompactEvent[] = [];
    manager.on('compact.usage', (event) => events.push(event as AnyCompactEvent));
    expect(manager.costSnapshot('s')).toBeUndefined();
    manager.recordUsage('s', { inputTokens: 3_000, cacheCreationInputTokens: 0, outputTokens: 100 });
    manager.recordUsage('s', {
      inputTokens: 100,
      cacheReadInputTokens: 2_900,
      cacheCreationInputTokens: 100,
      outputTokens: 100,
    });
    const cost = manager.costSnapshot('s')!;
    expect(cost).toMatchObject({
      requests: 2,
      inputTokens: 6_100,
      cacheReadTokens: 2_900,
      cacheWriteTokens: 100,
      uncachedTokens: 3_100,
      outputTokens: 200,
      prefixRewrites: 0,
    });
    expect(cost.hitShare).toBeCloseTo(2_900 / 6_100, 9);
    expect(cost.billedInputEquivalent).toBeCloseTo(3_100 + 290 + 125 + 1_000, 6);
    expect(events).toHaveLength(2);
    expect(events[1]!.properties).toMatchObject({
      inputTokens: 3_100,
      cacheReadTokens: 2_900,
      prefixRewrites: 0,
    });

    const history = Array.from({ length: 30 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `turn ${i} ${'words '.repeat(60)}`,
    }));
    await manager.compact('s', history, { force: true });
    expect(manager.costSnapshot('s')!.prefixRewrites).toBe(1);
    // A snapshot is a copy.
    manager.costSnapshot('s')!.requests = 99;
    expect(manager.costSnapshot('s')!.requests).toBe(2);
    manager.endSession('s');
    expect(manager.costSnapshot('s')).toBeUndefined();
    await manager.shutdown();
  });

  it('rejects a usage field that is not a count, naming it', () => {
    const manager = new CompactManager({ model: 'gpt-4o' });
    expect(() => manager.recordUsage('s', { inputTokens: 10, cachedInputTokens: -1 })).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        message: expect.stringMatching(/usage\.cachedInputTokens/),
      }),
    );
    expect(
      () => new CompactManager({ pricing: { gpt: { cacheRead: 0.1, cacheWrite: Number.NaN, output: 4 } } }),
    ).toThrow(/pricing\.gpt\.cacheWrite/);
  });
});
