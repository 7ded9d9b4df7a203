import { describe, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../events/events.js';
import { CompactManager } from '../manager/compact-manager.js';
import { UsageCalibration } from './usage-calibration.js';

describe('reported usage that lies', () => {
  it('leaves reports outside the band out of calibration and keeps the previous good sample', () => {
    const calibration = new UsageCalibration();
    calibration.record('s', { estimatedTokens: 10_000, reportedTokens: 11_000 });
    const lie = calibration.record('s', { estimatedTokens: 20_000, reportedTokens: 100 });
    expect(lie.lastRejected).toBe(true);
    expect(lie.rejected).toBe(1);
    expect(lie.last).toEqual({ estimatedTokens: 10_000, reportedTokens: 11_000 });
    expect(calibration.ratio('s')).toBeCloseTo(1.1);
    // The decision count builds on the last good report, not on the lie.
    expect(calibration.count('s', 20_000, false).tokens).toBeGreaterThanOrEqual(20_000);
    const high = calibration.record('s', { estimatedTokens: 20_000, reportedTokens: 90_000 });
    expect(high.lastRejected).toBe(true);
    expect(high.rejected).toBe(2);
    const good = calibration.record('s', { estimatedTokens: 20_000, reportedTokens: 21_000 });
    expect(good.lastRejected).toBeUndefined();
    expect(good.rejected).toBe(2);
    expect(() => new UsageCalibration({ mismatchBand: 1 })).toThrow(/mismatchBand/);
  });

  it('a session whose provider always reports 100 input tokens still compacts under the window', async () => {
    const window = 8000;
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: window });
    const events: AnyCompactEvent[] = [];
    manager.on('*', (event) => events.push(event as AnyCompactEvent));
    const history: { role: string; content: unknown }[] = [
      { role: 'user', content: 'Fix the flaky test in src/queue.ts; never touch the CI config.' },
    ];
    let compactions = 0;
    for (let step = 0; step < 40; step++) {
      const result = await manager.compact('lying-proxy', history, { format: 'anthropic' });
      if (result.applied) compactions++;
      expect(result.tokensAfter).toBeLessThanOrEqual(window);
      expect(manager.estimate(result.messages, { format: 'anthropic' }).total).toBeLessThanOrEqual(window);
      manager.recordUsage('lying-proxy', { inputTokens: 100 });
      const id = `toolu_${step}`;
      history.push(
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `f${step}.ts` } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: id, content: `line ${step}: ${'const x = 1; '.repeat(120)}` },
          ],
        },
      );
    }
    expect(compactions).toBeGreaterThan(0);
    const warnings = events.filter((event) => event.name === 'compact.warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.properties).toMatchObject({ code: 'usage_mismatch' });
    await manager.shutdown();
  });
});
