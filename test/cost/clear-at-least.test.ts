import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { CompactPolicy } from '../../src/core/policy.js';
import { memoryStorage } from '../../src/storage/memory/index.js';
import { quarterCounter } from '../support/quarter-counter.js';
import { codingSessionHead, readFileRound } from '../support/read-file-session.js';

/**
 * Issue 21 point 2: a rewrite happens only when it frees at least a minimum
 * (`policy.clearAtLeast`, like Anthropic's `clear_at_least`). A triggered compaction that
 * would free less is declined while the request fits the budget: the request goes out as it
 * is (no rewrite of the cached prefix), the decision event says why.
 */
async function session(policy: Partial<CompactPolicy>) {
  const manager = new CompactManager({
    maxContextTokens: 16_000,
    tokenCounter: quarterCounter,
    policy,
    storage: memoryStorage(),
  });
  let transcripts = 0;
  manager.on('compact.archival', (event) => {
    if (event.properties.artifact === 'transcript') transcripts++;
  });
  const declined: string[] = [];
  manager.on('compact.trigger_decision', (event) => {
    if (!event.properties.triggered && event.properties.reason.includes('clear_at_least'))
      declined.push(event.properties.reason);
  });
  const history: Record<string, unknown>[] = codingSessionHead();
  const applied: { freed: number; before: number }[] = [];
  let declinedResults = 0;
  for (let call = 1; call <= 120; call++) {
    history.push(
      ...readFileRound(call, `file ${call}\n${'x'.repeat(1_200)}`, `Step ${call}: reading the next file.`),
    );
    const result = await manager.compact('s', history);
    expect(result.tokensAfter).toBeLessThanOrEqual(manager.budget);
    if (result.applied)
      applied.push({ freed: result.tokensBefore - result.tokensAfter, before: result.tokensBefore });
    if (result.reason.includes('clear_at_least')) {
      declinedResults++;
      expect(result.applied).toBe(false);
      expect(result.tokensAfter).toBe(result.tokensBefore);
    }
  }
  await manager.flush();
  return { manager, applied, declined, declinedResults, transcripts };
}

describe('policy.clearAtLeast', () => {
  it('declines rewrites that free less than the minimum while the request fits, and rewrites less often', async () => {
    // Clearing only down to the target frees ~15% of the window per trigger (2,400 tokens).
    const base: Partial<CompactPolicy> = { cacheAware: false, targetPct: 0.7 };
    const plain = await session(base);
    const atLeast = await session({ ...base, clearAtLeast: 3_000 });
    expect(plain.declined).toHaveLength(0);
    expect(atLeast.declined.length).toBeGreaterThan(0);
    expect(atLeast.declinedResults).toBe(atLeast.declined.length);
    // Every rewrite that happened freed the minimum, or the request had reached the budget.
    for (const { freed, before } of atLeast.applied)
      expect(freed >= 3_000 || before > atLeast.manager.budget, `freed ${freed} of ${before}`).toBe(true);
    expect(atLeast.applied.length).toBeLessThan(plain.applied.length);
    // A declined compaction archives nothing: one transcript per applied compaction.
    expect(atLeast.transcripts).toBe(atLeast.applied.length);
    expect(plain.transcripts).toBe(plain.applied.length);
  });

  it('is checked like every policy number', () => {
    expect(() => new CompactManager({ maxContextTokens: 16_000, policy: { clearAtLeast: -1 } })).toThrow(
      /clearAtLeast/,
    );
  });
});
