/**
 * Bounded memory: `endSession` frees a session's memory, `cacheMaxBytes` caps what sessions
 * hold (least recently used dropped first), and `shutdown()` frees everything. Asserted on
 * the manager's own counters (`cacheStatus`), not on heap figures.
 */
import { describe, expect, it } from 'vitest';
import { charCounter } from '../../../test/support/manager-fixtures.js';
import { MemorySessionStore, type SessionStore } from '../session/session-store.js';
import { CompactManager } from './compact-manager.js';

function chatTurns(n: number, seed: string, size = 100): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ role: 'user', content: `${seed} Q${i} `.padEnd(size, 'q') });
    out.push({ role: 'assistant', content: `${seed} A${i} `.padEnd(size, 'a') });
  }
  return out;
}

/** A shared-store stand-in (not the in-process class), so the fail-open copies are in play. */
function sharedStore(): SessionStore {
  const inner = new MemorySessionStore();
  return {
    name: 'shared',
    get: (id) => inner.get(id),
    set: (id, state, options) => inner.set(id, state, options),
    delete: (id) => inner.delete(id),
    acquireLock: (id, ttl) => inner.acquireLock(id, ttl),
  };
}

const options = { maxContextTokens: 10_000, tokenCounter: charCounter, policy: { keepRecentTurns: 2 } };

describe('bounded memory', () => {
  it('endSession returns the held sessions and bytes to zero; the stored state stays', async () => {
    const manager = new CompactManager({ ...options, store: sharedStore() });
    const empty = manager.cacheStatus();
    expect(empty).toEqual({
      sessions: 0,
      bytes: 0,
      cachedMessages: 0,
      cachedMessageBytes: 0,
      storedStates: 0,
    });
    const ids = Array.from({ length: 50 }, (_, i) => `s${i}`);
    for (const id of ids) await manager.compact(id, chatTurns(48, id));
    const full = manager.cacheStatus();
    expect(full.sessions).toBe(50);
    expect(full.storedStates).toBe(50);
    // 96 messages of ~100 characters per session: at least 400 + 4 x 100 bytes each.
    expect(full.bytes).toBeGreaterThan(50 * 96 * 800);
    const version = (await manager.state('s0'))!.version;
    expect(version).toBeGreaterThan(0);

    for (const id of ids.slice(0, 25)) manager.endSession(id);
    const half = manager.cacheStatus();
    expect(half.sessions).toBe(25);
    expect(half.storedStates).toBe(25);
    expect(half.bytes).toBeLessThan(full.bytes * 0.55);
    for (const id of ids.slice(25)) manager.endSession(id);
    expect(manager.cacheStatus()).toMatchObject({ sessions: 0, bytes: 0, storedStates: 0 });

    // An ended session resumes from its stored state.
    const resumed = await manager.compact('s0', chatTurns(49, 's0'));
    expect(resumed.version).toBeGreaterThanOrEqual(version);
    expect(JSON.stringify(resumed.messages)).toContain('<COMPACT-SUMMARY v');
    manager.endSession('s0');
    expect(manager.cacheStatus()).toMatchObject({ sessions: 0, bytes: 0 });
  });

  it('cacheMaxBytes evicts the least recently used sessions', async () => {
    const cap = 2_000_000;
    const manager = new CompactManager({ ...options, cacheMaxBytes: cap });
    for (let i = 0; i < 60; i++) {
      await manager.compact(`s${i}`, chatTurns(40, `s${i}`));
      expect(manager.cacheStatus().bytes).toBeLessThanOrEqual(cap);
    }
    const status = manager.cacheStatus();
    expect(status.sessions).toBeLessThan(60);
    expect(status.sessions).toBeGreaterThan(0);
    // An evicted session is indexed again and still answers, within the cap.
    const again = await manager.compact('s0', chatTurns(40, 's0'));
    expect(again.tokensAfter).toBeLessThanOrEqual(manager.budget);
    expect(manager.cacheStatus().bytes).toBeLessThanOrEqual(cap);
    expect(() => new CompactManager({ cacheMaxBytes: -1 })).toThrow(/cacheMaxBytes/);
  });

  it('shutdown frees everything', async () => {
    const manager = new CompactManager({ ...options, store: sharedStore() });
    for (let i = 0; i < 10; i++) await manager.compact(`s${i}`, chatTurns(45, `s${i}`));
    expect(manager.cacheStatus().cachedMessages).toBeGreaterThan(0);
    await manager.shutdown();
    expect(manager.cacheStatus()).toEqual({
      sessions: 0,
      bytes: 0,
      cachedMessages: 0,
      cachedMessageBytes: 0,
      storedStates: 0,
    });
  });
});

describe('the shared content cache is capped in bytes too', () => {
  it('60 sessions of 10 KB messages (about 25 MB of parses) stay under cacheMaxBytes', async () => {
    const cap = 2 * 1024 * 1024;
    const manager = new CompactManager({
      maxContextTokens: 2_000_000,
      tokenCounter: charCounter,
      cacheMaxBytes: cap,
    });
    for (let s = 0; s < 60; s++) await manager.compact(`big-${s}`, chatTurns(10, `session ${s}`, 10_000));
    const status = manager.cacheStatus();
    expect(status.cachedMessageBytes).toBeGreaterThan(0);
    expect(status.cachedMessageBytes).toBeLessThanOrEqual(cap);
    expect(status.bytes).toBeLessThanOrEqual(cap);
    // The newest session is still served from the cache: its messages are counted once.
    const before = status.cachedMessages;
    await manager.compact('big-59', chatTurns(10, 'session 59', 10_000));
    expect(manager.cacheStatus().cachedMessages).toBe(before);
    await manager.shutdown();
    expect(manager.cacheStatus()).toMatchObject({ cachedMessages: 0, cachedMessageBytes: 0 });
  });
});
