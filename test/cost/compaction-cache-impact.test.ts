import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { CompactEventProperties } from '../../src/index.js';
import { quarterCounter } from '../support/quarter-counter.js';
import { codingSessionHead, readFileRound } from '../support/read-file-session.js';

/**
 * Issue 21 point 5: a compaction's event says what it does to the prompt cache. The figures
 * are checked against the requests themselves: the prefix the event says is kept is the part
 * of the compacting request equal to the request before it (what a provider reads from its
 * cache), and the rest is rewritten.
 */
describe('compact.pruned_messages carries the cache impact of the compaction', () => {
  it.each([
    ['claude-sonnet-4-5', 0.1, 1.25],
    ['gpt-4o', 0.5, 1],
  ])(
    '%s: kept prefix, rewritten tokens and the next request priced before and after',
    async (model, read, write) => {
      const manager = new CompactManager({ model, maxContextTokens: 16_000, tokenCounter: quarterCounter });
      const impacts: NonNullable<CompactEventProperties['compact.pruned_messages']['cache']>[] = [];
      manager.on('compact.pruned_messages', (event) => {
        if (event.properties.cache) impacts.push(event.properties.cache);
      });
      const history: Record<string, unknown>[] = codingSessionHead();
      let previous: string[] = [];
      let checked = 0;
      for (let call = 1; call <= 140; call++) {
        history.push(...readFileRound(call, `file ${call}\n${'x'.repeat(1_600)}`));
        const before = impacts.length;
        const result = await manager.compact('s', history);
        const sent = result.messages as unknown[];
        const texts = sent.map((message) => JSON.stringify(message));
        let shared = 0;
        while (shared < texts.length && texts[shared] === previous[shared]) shared++;
        previous = texts;
        if (impacts.length === before) continue;
        const impact = impacts.at(-1)!;
        checked++;
        expect(impact.tokensFreed).toBe(result.tokensBefore - result.tokensAfter);
        expect(impact.prefixKeptTokens + impact.rewrittenTokens).toBe(result.tokensAfter);
        // The request agrees on where it first changed from the one before.
        const keptMessages = manager.estimate(sent.slice(0, shared)).total;
        expect(Math.abs(impact.prefixKeptTokens - keptMessages)).toBeLessThanOrEqual(8);
        expect(Math.abs(impact.billedNextBefore - result.tokensBefore * read)).toBeLessThanOrEqual(1);
        expect(
          Math.abs(
            impact.billedNextAfter - (impact.prefixKeptTokens * read + impact.rewrittenTokens * write),
          ),
        ).toBeLessThanOrEqual(1);
        expect(impact.billedNextAfter).toBeLessThan(result.tokensBefore * write);
      }
      expect(checked).toBeGreaterThan(2);
    },
  );
});
