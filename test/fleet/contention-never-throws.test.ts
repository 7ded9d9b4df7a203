/**
 * Issue 46 point 3: a store that keeps changing under a compaction never throws to the agent.
 * Another process's compactions land between this process's read and its write, every time:
 * the call is answered locally (the newest stored view when it fits, else a compaction that
 * is not stored), with one `compact.error` (`concurrent_compaction`) saying so.
 */
import { describe, expect, it } from 'vitest';
import type { AnyCompactEvent, CompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { MemorySessionStore, type SessionLock } from '../../src/core/session/session-store.js';
import { charCounter, chatTurns } from '../support/background-fixtures.js';

/**
 * The shared store as this process sees it when another process compacts the session each
 * time this one takes the lock (`race`, run once per lock taken by this process).
 */
class RacedStore extends MemorySessionStore {
  race: (() => Promise<unknown>) | undefined;
  raced = 0;
  #racing = false;
  override async acquireLock(sessionId: string, ttlMs: number): Promise<SessionLock | undefined> {
    if (this.race && !this.#racing) {
      this.#racing = true;
      try {
        await this.race();
        this.raced++;
      } finally {
        this.#racing = false;
      }
    }
    return super.acquireLock(sessionId, ttlMs);
  }
}

/** A store whose every write is refused (another process always wrote first). */
class RefusingStore extends MemorySessionStore {
  override async set(): Promise<boolean> {
    return false;
  }
}

function errorsOf(events: AnyCompactEvent[]): CompactEvent<'compact.error'>['properties'][] {
  return events
    .filter((event) => event.name === 'compact.error')
    .map((event) => (event as CompactEvent<'compact.error'>).properties);
}

describe('contention never throws (issue 46.3)', () => {
  it('answers locally, with one event, when every write is refused', async () => {
    const store = new RefusingStore();
    const manager = new CompactManager({
      maxContextTokens: 3_000,
      tokenCounter: charCounter,
      store,
      policy: { hardCapBuffer: 100, maxSummaryTokens: 200 },
    });
    const events: AnyCompactEvent[] = [];
    manager.on('*', (event) => events.push(event as AnyCompactEvent));
    const result = await manager.compact('s', chatTurns(16, 100));
    expect(result.applied).toBe(true);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
    const local = errorsOf(events).filter((e) => e.fallback === 'local');
    expect(local).toHaveLength(1);
    expect(local[0]!.errorType).toBe('concurrent_compaction');
    expect(await store.get('s')).toBeUndefined();
    await manager.shutdown();
  });

  it('never throws while another process compacts under every lock, and never doubles a text', async () => {
    const store = new RacedStore();
    const options = {
      maxContextTokens: 3_000,
      tokenCounter: charCounter,
      store,
      sessionLock: true,
      policy: { hardCapBuffer: 100, maxSummaryTokens: 200 },
    } as const;
    const manager = new CompactManager(options);
    const other = new CompactManager(options);
    const events: AnyCompactEvent[] = [];
    manager.on('*', (event) => events.push(event as AnyCompactEvent));
    let messages = chatTurns(16, 100);
    store.race = () => other.manualCompact('s', messages);
    /** Each version's text as stored after each call. */
    const texts = new Map<number, Set<string>>();
    const note = (version: number, text: string) => {
      const seen = texts.get(version) ?? new Set<string>();
      seen.add(text);
      texts.set(version, seen);
    };
    for (let step = 0; step < 8; step++) {
      messages = [...messages, ...chatTurns(4, 100, `n${step}`)];
      const result = await manager.compact('s', messages);
      expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
      const stored = (await store.get('s'))!;
      if (stored.summary) note(stored.version, stored.summary.text);
      const local = errorsOf(events).some((e) => e.fallback === 'local');
      // What this process sent at the stored version is the stored text.
      if (result.summary && !local && result.summary.version === stored.version)
        expect(result.summary.text).toContain(stored.summary!.text);
      events.length = 0;
    }
    expect(store.raced).toBeGreaterThan(0);
    for (const [version, seen] of texts) expect([version, seen.size]).toEqual([version, 1]);
    await manager.shutdown();
    await other.shutdown();
  });
});
