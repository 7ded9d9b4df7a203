import {
  isCompactError,
  MemorySessionStore,
  type RevisedState,
  type SessionState,
  type SessionStore,
  type SessionStoreSetOptions,
} from '../../src/index.js';

/**
 * A store outside the process kept in this one: each state held as its JSON text (what a file
 * or Redis holds), so a manager on it packs and unpacks (a `MemorySessionStore` subclass is not
 * packed). `copy()` is another store holding the same texts: a fresh process on the session as
 * it stands, whose writes do not reach this one.
 */
export class JsonTextStore implements SessionStore {
  readonly name = 'json-text';
  readonly texts = new Map<string, string>();
  readonly #locks = new MemorySessionStore();

  async get(sessionId: string): Promise<SessionState | undefined> {
    const text = this.texts.get(sessionId);
    return text === undefined ? undefined : (JSON.parse(text) as SessionState);
  }

  async set(sessionId: string, state: SessionState, options: SessionStoreSetOptions = {}): Promise<boolean> {
    const current = await this.get(sessionId);
    if (options.expectedVersion !== undefined && (current?.version ?? 0) !== options.expectedVersion)
      return false;
    this.texts.set(sessionId, JSON.stringify(state));
    return true;
  }

  async delete(sessionId: string): Promise<void> {
    this.texts.delete(sessionId);
  }

  acquireLock(sessionId: string, ttlMs: number) {
    return this.#locks.acquireLock(sessionId, ttlMs);
  }
}

/** What a {@link HostileStore} does to the next operations. */
export interface StoreFaults {
  /** Reads (`get`, `getIfChanged`) that throw, from the next one. */
  reads: number;
  /** Writes (`set`, `delete`) that throw, from the next one. */
  writes: number;
  /** Turns of the event loop each operation waits before it answers (calls answered out of order). */
  delays: number[];
}

/**
 * `inner` as the world makes it: operations that throw for a while, answers that arrive late
 * and out of order, and every key written remembered (to copy the session for a fresh process).
 */
export class HostileStore implements SessionStore {
  readonly name: string;
  readonly inner: SessionStore;
  readonly keys = new Set<string>();
  readonly faults: StoreFaults = { reads: 0, writes: 0, delays: [] };
  /** Operations that threw. */
  thrown = 0;
  #op = 0;

  constructor(inner: SessionStore) {
    this.inner = inner;
    this.name = `hostile-${inner.name}`;
    if (inner.getIfChanged)
      this.getIfChanged = async (sessionId: string, revision?: string): Promise<RevisedState> => {
        await this.#late('read');
        return inner.getIfChanged!(sessionId, revision);
      };
  }

  getIfChanged?: (sessionId: string, revision?: string) => Promise<RevisedState>;

  async #late(kind: 'read' | 'write'): Promise<void> {
    const delays = this.faults.delays;
    const turns = delays.length === 0 ? 0 : delays[this.#op++ % delays.length]!;
    for (let k = 0; k < turns; k++) await new Promise((resolve) => setImmediate(resolve));
    const left = kind === 'read' ? this.faults.reads : this.faults.writes;
    if (left <= 0) return;
    if (kind === 'read') this.faults.reads--;
    else this.faults.writes--;
    this.thrown++;
    throw new Error(`store ${kind} failed (hostile)`);
  }

  async get(sessionId: string): Promise<SessionState | undefined> {
    await this.#late('read');
    return this.inner.get(sessionId);
  }

  async set(sessionId: string, state: SessionState, options?: SessionStoreSetOptions): Promise<boolean> {
    await this.#late('write');
    this.keys.add(sessionId);
    return this.inner.set(sessionId, state, options);
  }

  async delete(sessionId: string): Promise<void> {
    await this.#late('write');
    return this.inner.delete(sessionId);
  }

  acquireLock(sessionId: string, ttlMs: number) {
    return this.inner.acquireLock(sessionId, ttlMs);
  }

  /**
   * What `inner` holds for `key`, read past this store's faults (`undefined` also for a state a
   * store that checks its reads rejects: Redis sets it aside and throws `corrupt_state`).
   */
  async raw(key: string): Promise<SessionState | undefined> {
    try {
      return await this.inner.get(key);
    } catch (error) {
      if (isCompactError(error, 'corrupt_state')) return undefined;
      throw error;
    }
  }

  /** A store holding what `inner` holds now, as text (see {@link JsonTextStore}). */
  async copy(): Promise<JsonTextStore> {
    const out = new JsonTextStore();
    for (const key of this.keys) {
      const state = await this.raw(key);
      if (state !== undefined) out.texts.set(key, JSON.stringify(state));
    }
    return out;
  }
}
