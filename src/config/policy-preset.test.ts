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
