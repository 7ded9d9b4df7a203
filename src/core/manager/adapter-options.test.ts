/**
 * A `store` or `storage` that is not one (a config file's `storage: 'fs'` passed to the
 * constructor, an object missing a method) was taken as it was: every call then went on without
 * it, the store reported as down for good (`session store "undefined" failed: TypeError
 * inner.get is not a function`, and no compaction while it was "down") or the archive failing
 * each write (`storage.saveTranscript is not a function`). Now the constructor refuses it,
 * `invalid_config` naming the field, as it does any other bad option.
 */
import { describe, expect, it } from 'vitest';
import { isCompactError } from '../errors.js';
import { MemorySessionStore } from '../session/session-store.js';
import { CompactManager } from './compact-manager.js';

function configError(options: Record<string, unknown>): { message: string; path: unknown } {
  try {
    new CompactManager({ model: 'gpt-4o', ...options });
  } catch (error) {
    if (!isCompactError(error, 'invalid_config')) throw error;
    return { message: error.message, path: error.issues?.[0]?.path };
  }
  throw new Error('no error');
}

const storage = {
  name: 'kept',
  saveTranscript: async () => 'x',
  saveSummary: async () => 'x',
  saveEvent: async () => {},
};

describe('store and storage are checked in the constructor', () => {
  it('a value that is no object names the field', () => {
    expect(configError({ storage: 'fs' })).toEqual({
      message: expect.stringMatching(/^storage must be a StorageAdapter/),
      path: ['storage'],
    });
    expect(configError({ store: 'redis' })).toEqual({
      message: expect.stringMatching(/^store must be a SessionStore/),
      path: ['store'],
    });
  });

  it('a missing method names it', () => {
    expect(configError({ store: {} }).path).toEqual(['store', 'get']);
    expect(configError({ store: { ...new MemorySessionStore(), get: async () => undefined } }).path).toEqual([
      'store',
      'set',
    ]);
    expect(configError({ storage: {} }).path).toEqual(['storage', 'saveTranscript']);
    expect(configError({ storage: { ...storage, saveEvent: undefined } }).path).toEqual([
      'storage',
      'saveEvent',
    ]);
  });

  it('a whole adapter, or a class instance, is taken', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', store: new MemorySessionStore(), storage });
    await manager.shutdown();
  });
});
