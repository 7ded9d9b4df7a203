import { describe, expect, it } from 'vitest';
import { describeSessionStoreConformance } from '../../testing/session-store-conformance.js';
import { isCompactError } from '../errors.js';
import { MemorySessionStore, type SessionState } from './session-store.js';

describeSessionStoreConformance({
  name: 'memory',
  async create() {
    return { store: new MemorySessionStore(), close: async () => {} };
  },
});

describe('MemorySessionStore', () => {
  it('returns deep-frozen states', async () => {
    const store = new MemorySessionStore();
    const state: SessionState = {
      sessionId: 's',
      version: 1,
      coveredIds: ['a'],
      rewrites: { b: { kind: 'cleared', ref: 'tool-1' } },
      updatedAt: 0,
    };
    await store.set('s', state);
    const got = (await store.get('s')) as SessionState;
    expect(Object.isFrozen(got.rewrites?.b)).toBe(true);
    expect(() => got.coveredIds.push('x')).toThrow(TypeError);
  });

  it('names the bad field in a typed error', async () => {
    const store = new MemorySessionStore();
    const error = await store
      .set('s', { sessionId: 's', version: 2.5, coveredIds: [], updatedAt: 0 })
      .catch((e: unknown) => e);
    expect(isCompactError(error, 'invalid_config')).toBe(true);
    expect((error as { issues: unknown }).issues).toEqual([
      { path: ['state', 'version'], message: 'must be a whole number >= 0', code: 'invalid_config' },
    ]);
    const ttl = await store.acquireLock('s', -5).catch((e: unknown) => e);
    expect(isCompactError(ttl, 'invalid_config') && ttl.issues[0]?.path).toEqual(['ttlMs']);
  });
});
