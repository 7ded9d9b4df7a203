/**
 * Issue 47 point 1: a fresh process's first read of a long session's state (thousands of ids
 * and rewrites, read from a store that names revisions) is served unfrozen and frozen in
 * slices after the call (freezing it on the call's path was a share of a compacted session's
 * first call); once frozen, a read at the same revision answers the held copy without reading
 * it again. A small state is frozen at once, as before; a forgotten session keeps nothing.
 */
import { describe, expect, it } from 'vitest';
import { until } from '../../../test/support/until.js';
import type { SessionState } from '../session/session-state.js';
import type { RevisedState, SessionStore } from '../session/session-store.js';
import { MemorySessionStore } from '../session/session-store.js';
import { ReadRevisions } from './read-revisions.js';

const stateOf = (ids: number): SessionState => ({
  sessionId: 's',
  version: 1,
  updatedAt: 1,
  coveredIds: Array.from({ length: ids }, (_, i) => `m${i}`),
  rewrites: { m0: { kind: 'cleared', ref: 'r0' } },
});

/** A store whose reads are fresh JSON copies at revision `r1` (as a database's), counting whole reads. */
function revisedStore(state: SessionState) {
  const text = JSON.stringify(state);
  const memory = new MemorySessionStore();
  const store = {
    name: 'revised',
    reads: 0,
    get: async () => {
      store.reads++;
      return JSON.parse(text) as SessionState;
    },
    getIfChanged: async (_id: string, revision?: string): Promise<RevisedState> =>
      revision === 'r1' ? { revision: 'r1', unchanged: true } : { revision: 'r1', state: await store.get() },
    set: memory.set.bind(memory),
    delete: memory.delete.bind(memory),
    acquireLock: memory.acquireLock.bind(memory),
  } satisfies SessionStore & { reads: number };
  return store;
}

const direct = <T>(run: () => Promise<T>) => run();

async function readAndKeep(revisions: ReadRevisions, store: SessionStore, local?: SessionState) {
  const read = await revisions.read(store, 's', local, direct);
  revisions.keep('s', read, read.state);
  return read;
}

describe('ReadRevisions: the held copy of a state read at a revision', () => {
  it('serves a large state unfrozen, freezes it after the call, then answers it unread', async () => {
    const store = revisedStore(stateOf(5_000));
    const revisions = new ReadRevisions();
    const first = await readAndKeep(revisions, store);
    const state = first.state!;
    expect(first.checked).toBe(false);
    expect(Object.isFrozen(state)).toBe(false);
    await until(() => Object.isFrozen(state.rewrites?.m0), 'the large state frozen in slices');
    expect(Object.isFrozen(state) && Object.isFrozen(state.coveredIds)).toBe(true);
    const again = await revisions.read(store, 's', state, direct);
    expect(again).toMatchObject({ state, checked: true });
    expect(store.reads).toBe(1);
  });

  it('freezes a small state at once and answers it unread', async () => {
    const store = revisedStore(stateOf(10));
    const revisions = new ReadRevisions();
    const state = (await readAndKeep(revisions, store)).state!;
    expect(Object.isFrozen(state.rewrites?.m0)).toBe(true);
    expect(await revisions.read(store, 's', state, direct)).toMatchObject({ state, checked: true });
    expect(store.reads).toBe(1);
  });

  it('holds nothing for a session forgotten while its state was being frozen', async () => {
    const store = revisedStore(stateOf(5_000));
    const revisions = new ReadRevisions();
    const state = (await readAndKeep(revisions, store)).state!;
    revisions.forget('s');
    await until(() => Object.isFrozen(state.rewrites?.m0), 'the large state frozen in slices');
    expect(await revisions.read(store, 's', state, direct)).toMatchObject({ checked: false });
    expect(store.reads).toBe(2);
  });
});
