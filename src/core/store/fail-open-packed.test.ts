/**
 * Review 79: a write kept during an outage is written when the store answers, as long as the
 * store still holds the state this process knew. A long state comes back unpacked
 * (packed-state.ts), its rewrites' fields in the packed form's order: the check must not read
 * that as another process's write (the kept write, here new pins, was dropped).
 */
import { describe, expect, it } from 'vitest';
import { HostileStore, JsonTextStore } from '../../../test/support/hostile-store.js';
import type { SessionRewrite, SessionState } from '../session/session-state.js';
import { FailOpenStore } from './fail-open-store.js';

/** A state of version 1 with `n` rewrites made while the archive failed (`unarchived` set before `hash`, as the cascade sets them). */
function stateWithRewrites(n: number): SessionState {
  const rewrites: Record<string, SessionRewrite> = {};
  for (let i = 0; i < n; i++)
    rewrites[`h:${i}`] = { kind: 'cleared', ref: `tool-${i}`, unarchived: true, hash: `h${i}` };
  return { sessionId: 's', version: 1, coveredIds: [], rewrites, updatedAt: 1 };
}

describe('a write kept during an outage, over a packed state', () => {
  it.each([8, 80])('is written when the store answers again (%i rewrites)', async (n) => {
    const store = new HostileStore(new JsonTextStore());
    const failOpen = new FailOpenStore(store, { timeoutMs: 500, onOutage: () => {} });
    const state = stateWithRewrites(n);
    expect(await failOpen.within('s', () => failOpen.set('s', state, { expectedVersion: 0 }))).toBe(true);
    store.faults.writes = 1;
    const pinned = { ...state, pinnedIds: ['p:1'], updatedAt: 2 };
    expect(await failOpen.within('s', () => failOpen.set('s', pinned))).toBe(true);
    expect(failOpen.pendingWrites).toBe(1);
    failOpen.retryNow();
    await failOpen.flushPending();
    expect(failOpen.pendingWrites).toBe(0);
    expect((await store.inner.get('s'))?.pinnedIds).toEqual(['p:1']);
  });
});
