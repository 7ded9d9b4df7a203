/**
 * Issue 47 point 1: `ready()` rehearses a fresh process's first call on a known session, so
 * that the real one does not compile the quick path's code (with a store outside the process:
 * the in-process one of a fresh process knows no session, and the code compiled would only stay
 * in the heap, issue 47 point 4). The rehearsal must really take
 * the quick path (a change of its conditions would leave the rehearsal running the full path,
 * silently), and must touch nothing of the caller's.
 */
import { describe, expect, it } from 'vitest';
import { MemorySessionStore, type SessionStore } from '../session/session-store.js';
import { CompactManager } from './compact-manager.js';
import { firstCallRehearsed, rehearsalServes, rehearseQuickCall } from './rehearse-first-call.js';

/** A store that records every call made on it. */
function watchedStore(): { store: SessionStore; calls: string[] } {
  const memory = new MemorySessionStore();
  const calls: string[] = [];
  const note = <T>(call: string, result: T): T => {
    calls.push(call);
    return result;
  };
  const store: SessionStore = {
    name: 'watched',
    get: (key) => note(`get ${key}`, memory.get(key)),
    set: (key, state, options) => note(`set ${key}`, memory.set(key, state, options)),
    delete: (key) => note(`delete ${key}`, memory.delete(key)),
    acquireLock: (key, ttlMs) => note(`lock ${key}`, memory.acquireLock(key, ttlMs)),
  };
  return { store, calls };
}

describe('the rehearsed first call', () => {
  it('is run by ready() once per process, only with a store outside the process', async () => {
    // A fresh process's in-process store knows no session: its first call cannot take the quick path.
    expect(rehearsalServes(new MemorySessionStore())).toBe(false);
    expect(rehearsalServes(watchedStore().store)).toBe(true);
    expect(rehearsalServes(new (class extends MemorySessionStore {})())).toBe(true);
    // The flag is the process's: another file in a shared worker may have set it already.
    const shared = new CompactManager({ model: 'gpt-4o', store: watchedStore().store });
    await shared.ready();
    expect(firstCallRehearsed()).toBe(true);
    await shared.shutdown();
  });

  it('takes the quick path, for each built-in model family', async () => {
    for (const model of ['gpt-4o', 'gpt-4', 'claude-sonnet-4-5']) {
      const quick = await rehearseQuickCall((store) => new CompactManager({ model, store }));
      expect({ model, quick }).toEqual({ model, quick: true });
    }
  });

  it("leaves the caller's store and sessions alone", async () => {
    const { store, calls } = watchedStore();
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000, store });
    await manager.ready();
    expect(calls).toEqual([]);
    expect(manager.cacheStatus().sessions).toBe(0);
    await manager.shutdown();
  });
});
