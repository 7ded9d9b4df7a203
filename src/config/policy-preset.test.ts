import { describe, expect, it } from 'vitest';
import { CompactManager } from '../core/manager/compact-manager.js';
import { resolveConfig } from './load-config.js';
import { toManagerOptions } from './to-manager-options.js';

describe('policy.preset in a config (issue 34, point 6)', () => {
  it('the config key policy.preset reaches the manager', async () => {
    const config = resolveConfig({ max_context_tokens: 100_000, policy: { preset: 'cost' } }, { env: {} });
    const manager = new CompactManager(await toManagerOptions(config));
    expect(manager.triggerTokens).toBe(40_000);
    expect(manager.policy).toMatchObject({ preset: 'cost', targetPct: 0.2 });
    const overridden = resolveConfig(
      { max_context_tokens: 100_000, policy: { preset: 'cost', trigger_pct: 0.5 } },
      { env: {} },
    );
    expect(new CompactManager(await toManagerOptions(overridden)).triggerTokens).toBe(50_000);
  });
});

describe("the preset's reference (issue 48)", () => {
  it('points to the page that holds the figures: docs/how-it-works.md, Tuning for cost', async () => {
    const { readFile } = await import('node:fs/promises');
    const { policySchema } = await import('./policy-schema.js');
    const description = policySchema.shape.preset.description ?? '';
    expect(description).toContain("docs/how-it-works.md, Measured: 'Tuning for cost'");
    const page = await readFile(new URL('../../docs/how-it-works.md', import.meta.url), 'utf8');
    expect(page).toContain('## Measured');
    expect(page).toContain('**Tuning for cost.**');
  });
});
