import { describe, expect, it } from 'vitest';
import { CompactManager } from '../core/manager/compact-manager.js';
import { resolveConfig } from './load-config.js';
import { toManagerOptions } from './to-manager-options.js';

describe('policy.preset in a config (issue 34, point 6)', () => {
  it('the config key policy.preset reaches the manager', async () => {
    const config = resolveConfig({ max_context_tokens: 100_000, policy: { preset: 'quality' } }, { env: {} });
    const manager = new CompactManager(await toManagerOptions(config));
    expect(manager.triggerTokens).toBe(85_000);
    expect(manager.policy).toMatchObject({
      preset: 'quality',
      cacheAware: false,
      costTrigger: false,
      clearKeepRecent: 3,
    });
    const overridden = resolveConfig(
      { max_context_tokens: 100_000, policy: { preset: 'quality', trigger_pct: 0.5, cost_trigger: true } },
      { env: {} },
    );
    const policy = new CompactManager(await toManagerOptions(overridden)).policy;
    expect(policy).toMatchObject({ triggerPct: 0.5, costTrigger: true, cacheAware: false });
    const cost = resolveConfig({ max_context_tokens: 100_000, policy: { preset: 'cost' } }, { env: {} });
    expect(new CompactManager(await toManagerOptions(cost)).policy.clearKeepRecent).toBe(3);
  });
});

describe("the preset's reference (issue 48)", () => {
  it('points to the page that holds the figures: docs/how-it-works.md, Measured', async () => {
    const { readFile } = await import('node:fs/promises');
    const { policySchema } = await import('./policy-schema.js');
    const description = policySchema.shape.preset.description ?? '';
    expect(description).toContain('docs/how-it-works.md, Measured');
    const page = await readFile(new URL('../../docs/how-it-works.md', import.meta.url), 'utf8');
    expect(page).toContain('## Measured');
    expect(page).toContain('**What a session bills under prompt caching**');
  });
});
