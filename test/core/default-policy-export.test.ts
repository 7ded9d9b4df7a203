/**
 * `DEFAULT_POLICY` is named by the TSDoc of `CompactManagerOptions.policy` and
 * `compactMessages`: a user must be able to import it from the package root, and reading it
 * must not let them change every later manager's defaults.
 */
import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';

describe('DEFAULT_POLICY', () => {
  it('is exported from the package root, frozen with its lists', () => {
    const policy = (root as Record<string, unknown>).DEFAULT_POLICY as root.CompactPolicy | undefined;
    expect(policy).toBeDefined();
    expect(policy?.triggerPct).toBe(0.85);
    expect(policy?.rolesNeverPrune).toEqual(['system', 'developer']);
    expect(Object.isFrozen(policy)).toBe(true);
    expect(Object.isFrozen(policy?.rolesNeverPrune)).toBe(true);
    expect(Object.isFrozen(policy?.clearExcludeTools)).toBe(true);
    expect(() => policy?.rolesNeverPrune.push('user')).toThrow(TypeError);
  });

  it('spread into a policy of your own, it is a valid manager policy', async () => {
    const manager = new root.CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 8_000,
      policy: { ...root.DEFAULT_POLICY, keepRecentTurns: 2 },
    });
    const sent = await manager.preflight('s', [{ role: 'user', content: 'hello' }]);
    expect(sent).toEqual([{ role: 'user', content: 'hello' }]);
    await manager.shutdown();
  });
});
