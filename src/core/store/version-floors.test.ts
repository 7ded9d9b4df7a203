/**
 * The archive's version floor during an outage is read on every call. An outage is one
 * process's view: after a fault it stops asking the store for a while, and another process may
 * reach the store meanwhile and send a new version (archived before it is sent). The fleet test
 * (test/fleet/one-text-per-version.test.ts, Redis SIGSTOPped) caught it under load: agent a
 * compacted to v2 once Redis was back, and agent c, still in its own outage, answered the next
 * step from its local answer at v1, its floor read once at the outage's start.
 */
import { describe, expect, it } from 'vitest';
import type { SessionState } from '../session/session-state.js';
import { MemorySessionStore } from '../session/session-store.js';
import { FailOpenStore } from './fail-open-store.js';

/** A memory store that can be made to fail, as a stalled server does. */
class FailingStore extends MemorySessionStore {
  down = false;

  override async get(sessionId: string): Promise<SessionState | undefined> {
    if (this.down) throw new Error('connection lost');
    return super.get(sessionId);
  }

  override async set(sessionId: string, state: SessionState, options = {}): Promise<boolean> {
    if (this.down) throw new Error('connection lost');
    return super.set(sessionId, state, options);
  }
}

const stateAt = (version: number): SessionState => ({
  sessionId: 's',
  version,
  coveredIds: ['m1'],
  updatedAt: 1,
  summary: { text: `summary ${version}`, tokens: 3, createdAt: 1, summarizer: 'test' },
});

/** A fail-open store whose archive's floor is `archive.floor`, holding the session at v1. */
async function storeAtV1() {
  const inner = new FailingStore();
  const archive = { floor: 1 };
  const store = new FailOpenStore(inner, {
    timeoutMs: 1_000,
    onOutage: () => {},
    floor: async () => archive.floor,
  });
  await inner.set('s', stateAt(1));
  expect((await store.within('s', () => store.get('s')))?.version).toBe(1);
  inner.down = true;
  // The outage starts: the archive knows v1 too, the copy stands.
  expect((await store.within('s', () => store.get('s')))?.summary?.text).toBe('summary 1');
  return { store, archive };
}

describe('the version floor during an outage', () => {
  it('is read again on a later call: a version another process sent meanwhile lifts the answer', async () => {
    const { store, archive } = await storeAtV1();
    archive.floor = 2;
    const state = await store.within('s', () => store.get('s'));
    expect(state?.version).toBe(2);
    expect(state?.summary).toBeUndefined();
  });

  it('lifts a session with a write kept for the store too', async () => {
    const { store, archive } = await storeAtV1();
    // A write that keeps the version waits for the store.
    expect(await store.within('s', () => store.set('s', { ...stateAt(1), updatedAt: 2 }))).toBe(true);
    expect(store.pendingWrites).toBe(1);
    archive.floor = 2;
    expect((await store.within('s', () => store.get('s')))?.version).toBe(2);
  });

  it('keeps the highest floor read when a later read fails', async () => {
    const { store, archive } = await storeAtV1();
    archive.floor = 2;
    expect((await store.within('s', () => store.get('s')))?.version).toBe(2);
    archive.floor = Number.NaN;
    expect((await store.within('s', () => store.get('s')))?.version).toBe(2);
  });
});
