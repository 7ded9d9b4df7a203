/**
 * Issue 38 point 2: the first call after a compaction extends the view the compaction made
 * (view-after-compaction.ts) instead of rebuilding it from the whole history. It must send
 * exactly what a rebuild sends: after every call of a session that compacts many times, a
 * manager that never saw the session (so it builds the view from the stored state) is handed
 * the same history and must answer the same request.
 */
import { describe, expect, it } from 'vitest';
import {
  CompactManager,
  EmbeddedSummarizer,
  MemorySessionStore,
  type SessionStore,
} from '../../src/index.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';

/** Reads `inner`, writes nothing: the rebuilding manager must not change the session. */
function readOnly(inner: SessionStore): SessionStore {
  return {
    name: 'read-only',
    get: (id) => inner.get(id),
    set: async () => true,
    delete: async () => {},
    acquireLock: (id, ttl) => inner.acquireLock(id, ttl),
  };
}

const sessions = [
  { name: 'tool-heavy coding session', seed: 11, toolDensity: 3, resultChars: 900 },
  { name: 'chat with a few tools', seed: 12, toolDensity: 0.5, resultChars: 300 },
];

describe('the view after a compaction', () => {
  for (const shape of sessions) {
    it(`sends what a rebuilt view sends, call after call (${shape.name})`, async () => {
      const history = syntheticSession({ turns: 90, ...shape });
      const store = new MemorySessionStore();
      const options = {
        model: 'gpt-4o',
        maxContextTokens: 8_000,
        summaryKeys: 'view-after-compaction-test-key-0123',
      } as const;
      const manager = new CompactManager({ ...options, store, summarizer: new EmbeddedSummarizer() });
      let compactions = 0;
      let checkedAfter = 0;
      let previousApplied = false;
      for (let end = 2; end <= history.length; end++) {
        if (history[end]?.role !== 'user' && end < history.length) continue;
        const sent = history.slice(0, end);
        const result = await manager.compact('s', sent);
        if (result.applied) compactions++;
        else {
          const rebuilt = new CompactManager({ ...options, store: readOnly(store) });
          const fresh = await rebuilt.compact('s', sent);
          expect(fresh.applied).toBe(false);
          expect(JSON.stringify(result.messages)).toBe(JSON.stringify(fresh.messages));
          expect(result.tokensBefore).toBe(fresh.tokensBefore);
          expect(result.version).toBe(fresh.version);
          if (previousApplied) checkedAfter++;
          await rebuilt.shutdown();
        }
        previousApplied = result.applied;
      }
      expect(compactions).toBeGreaterThanOrEqual(3);
      expect(checkedAfter).toBeGreaterThanOrEqual(2);
      await manager.shutdown();
    });
  }
});
