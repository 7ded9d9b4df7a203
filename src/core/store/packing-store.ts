/**
 * A store outside the process as the fail-open store uses it: states written in their packed
 * form and read back unpacked (packed-state.ts), every other operation passed through.
 */
import { packState, unpackState } from '../session/packed-state.js';
import {
  MemorySessionStore,
  type RevisedState,
  type SessionState,
  type SessionStore,
  type SessionStoreSetOptions,
} from '../session/session-store.js';

/**
 * `inner`, with long states packed on `set` and unpacked on `get` and `getIfChanged`; `inner`
 * itself when it is an in-process store (a subclass of `MemorySessionStore`, which a manager
 * still treats as fallible): it keeps objects, not text, and would unpack each state again.
 */
export function packingStore(inner: SessionStore): SessionStore {
  if (inner instanceof MemorySessionStore) return inner;
  const store: SessionStore = {
    name: inner.name,
    get: async (sessionId: string) => {
      const state = await inner.get(sessionId);
      return state === undefined ? undefined : unpackState(state);
    },
    set: (sessionId: string, state: SessionState, options?: SessionStoreSetOptions) =>
      inner.set(sessionId, packState(state), options),
    delete: (sessionId: string) => inner.delete(sessionId),
    acquireLock: (sessionId: string, ttlMs: number) => inner.acquireLock(sessionId, ttlMs),
  };
  if (inner.getIfChanged)
    store.getIfChanged = async (sessionId: string, revision?: string): Promise<RevisedState> => {
      const answer = await inner.getIfChanged!(sessionId, revision);
      return answer.state === undefined ? answer : { ...answer, state: unpackState(answer.state) };
    };
  return store;
}
