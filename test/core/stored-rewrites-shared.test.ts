/**
 * Issue 47 point 2 (scavenges of a cold call): the rewrite records of a long session's state
 * are frozen when the state is made, and a memory store keeps those objects rather than a copy
 * of each (session/json-copy.ts), so a compaction that clears thousands of tool results leaves
 * one record per rewritten message, not two. The state read back is still the state written.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { MemorySessionStore, type SessionState } from '../../src/core/session/session-store.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';

/** A memory store that keeps the states it was given (to compare with what it stored). */
class WatchedStore extends MemorySessionStore {
  readonly given: SessionState[] = [];
  override async set(...args: Parameters<MemorySessionStore['set']>): Promise<boolean> {
    this.given.push(args[1]);
    return super.set(...args);
  }
}

describe('stored rewrites: shared with the state, not copied', () => {
  it('a long compacted state keeps its frozen rewrite records in a memory store', async () => {
    const history = JSON.parse(JSON.stringify(syntheticSession({ turns: 500, seed: 3, resultChars: 2500 })));
    const store = new WatchedStore();
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 400_000, store });
    try {
      const result = await manager.compact('long', history);
      await manager.flush();
      expect(result.applied).toBe(true);
      const given = store.given.at(-1)!;
      const ids = Object.keys(given.rewrites ?? {});
      expect(ids.length).toBeGreaterThan(500);
      const stored = (await store.get('long'))!;
      expect(JSON.stringify(stored)).toBe(JSON.stringify(given));
      expect(stored).not.toBe(given);
      for (const id of ids) {
        expect(Object.isFrozen(given.rewrites![id])).toBe(true);
        expect(stored.rewrites![id]).toBe(given.rewrites![id]);
      }
    } finally {
      await manager.shutdown();
    }
  });
});
