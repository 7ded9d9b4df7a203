/**
 * Issue 47 point 4: a session ended in the in-process store keeps nothing there. Its lock's
 * fencing token came from the store's one counter, so the session's entry goes once it holds
 * neither state nor lock, and the tokens still never repeat nor let a stale write through.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { syntheticSession } from '../../testing/synthetic-session.js';
import { CompactManager } from '../manager/compact-manager.js';
import { MemorySessionStore, type SessionLock, type SessionState } from './session-store.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapUsed(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

const stateOf = (sessionId: string, version: number): SessionState => ({
  sessionId,
  version,
  coveredIds: [],
  updatedAt: 0,
});

describe('MemorySessionStore after a session ends', () => {
  it('holds nothing for 30,000 sessions locked, written, released and deleted', async () => {
    const store = new MemorySessionStore();
    // One round first, so that the code and the store's empty table are in the baseline.
    const round = async (id: string) => {
      const lock = (await store.acquireLock(id, 60_000)) as SessionLock;
      await store.set(id, stateOf(id, 1), { expectedVersion: 0, fencingToken: lock.token });
      await lock.release();
      await store.delete(id);
    };
    for (let i = 0; i < 100; i++) await round(`warm-${i}`);
    const before = heapUsed();
    for (let i = 0; i < 30_000; i++) await round(`session-${i}-of-an-agent`);
    // Main kept each session's fencing counter (its entry and id: 10.5 MB here; this store 0.1 MB or less).
    const grown = heapUsed() - before;
    expect(grown, `${(grown / 1024).toFixed(0)} KB`).toBeLessThan(1024 * 1024);
  });

  it('issues greater tokens across a dropped entry, and refuses the older ones', async () => {
    const store = new MemorySessionStore();
    const first = (await store.acquireLock('s', 60_000)) as SessionLock;
    expect(await store.set('s', stateOf('s', 1), { fencingToken: first.token })).toBe(true);
    expect(await first.release()).toBe(true);
    await store.delete('s');
    // Released and deleted: the entry is gone; the old handle holds nothing.
    expect(await first.release()).toBe(false);
    expect(await first.renew()).toBe(false);
    const second = (await store.acquireLock('s', 60_000)) as SessionLock;
    expect(second.token).toBeGreaterThan(first.token);
    expect(await second.release()).toBe(true);
    // Gone again, then written without a lock: the first holder's write is still refused.
    expect(await store.set('s', stateOf('s', 2), {})).toBe(true);
    await store.delete('s');
    expect(await store.set('s', stateOf('s', 3), { fencingToken: first.token })).toBe(false);
    expect(await store.get('s')).toBeUndefined();
    const third = (await store.acquireLock('s', 60_000)) as SessionLock;
    expect(third.token).toBeGreaterThan(second.token);
    expect(await store.set('s', stateOf('s', 4), { fencingToken: third.token })).toBe(true);
  });

  it('keeps a lapsed lock nobody released, so its holder can still renew it', async () => {
    const store = new MemorySessionStore();
    const lock = (await store.acquireLock('s', 1)) as SessionLock;
    await store.delete('s');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await lock.renew(60_000)).toBe(true);
    expect(await store.acquireLock('s', 60_000)).toBeUndefined();
  });

  it('serves a manager made after the last one shut down, on the sessions it ended', async () => {
    const store = new MemorySessionStore();
    const messages = syntheticSession({ turns: 40, seed: 3 });
    for (let round = 0; round < 2; round++) {
      const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000, store });
      const result = await manager.compact('s', messages);
      expect(result.messages.length).toBeLessThan(messages.length);
      expect((await store.get('s'))?.version).toBeGreaterThan(0);
      manager.endSession('s');
      await manager.shutdown();
      await store.delete('s');
      await store.delete('s::counts');
    }
  });
});
