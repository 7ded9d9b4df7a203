import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';

/**
 * Issue 21: past the provider's cache lifetime the prompt cache is cold, so a rewrite costs
 * nothing extra: a session idle longer than `cacheLifetimeMs` compacts from `prepareAtPct`
 * instead of waiting for the trigger (when the rewrite would bust a warm cache). Fake clock.
 */

function history(turns: number) {
  return Array.from({ length: turns * 2 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `turn ${i}: ${'words '.repeat(50)}`,
  }));
}

async function run(cacheLifetimeMs: number | undefined, gapMs: number) {
  let now = 1_000_000;
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 8_000,
    clock: () => now,
    // The trigger's own rules: the cost trigger (default) would compact the first call already.
    policy: { costTrigger: false, ...(cacheLifetimeMs === undefined ? {} : { cacheLifetimeMs }) },
  });
  const reasons: string[] = [];
  manager.on('compact.trigger_decision', (event) => void reasons.push(event.properties.reason));
  // About 75% of the window: past prepareAtPct (0.7), below the trigger (0.85).
  let turns = 1;
  while ((await manager.estimate(history(turns))).total < 0.75 * 8_000) turns++;
  const first = await manager.compact('s', history(turns));
  now += gapMs;
  const second = await manager.compact('s', [...history(turns), { role: 'user', content: 'back again' }]);
  await manager.shutdown();
  return { first, second, reasons };
}

describe('an idle gap past the cache lifetime', () => {
  it('compacts from prepareAtPct after 6 minutes idle (default lifetime 5 minutes)', async () => {
    const { first, second, reasons } = await run(undefined, 6 * 60_000);
    expect(first.applied).toBe(false);
    expect(second.applied).toBe(true);
    expect(reasons).toEqual(['usage_pct < trigger_pct', 'cache cold']);
  });

  it('waits for the trigger within the lifetime, or when the lifetime is 0', async () => {
    expect((await run(undefined, 60_000)).second.applied).toBe(false);
    expect((await run(0, 6 * 60_000)).second.applied).toBe(false);
    // The 1-hour cache: 6 minutes idle is still warm.
    expect((await run(3_600_000, 6 * 60_000)).second.applied).toBe(false);
  });
});
