import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MemorySessionStore, type SessionState, type SessionStore } from '../../src/index.js';

/**
 * A store of one JSON file per session in `dir` (locks in memory): what a user's own file
 * store does, for tests of a fresh process reading a session back from disk.
 */
export function jsonFileStore(dir: string): SessionStore {
  const locks = new MemorySessionStore();
  const path = (id: string) => join(dir, `${encodeURIComponent(id)}.json`);
  return {
    name: 'file',
    async get(id) {
      try {
        return JSON.parse(await readFile(path(id), 'utf8')) as SessionState;
      } catch {
        return undefined;
      }
    },
    async set(id, state, options = {}) {
      const current = await this.get(id);
      if (options.expectedVersion !== undefined && (current?.version ?? 0) !== options.expectedVersion)
        return false;
      await writeFile(path(id), JSON.stringify(state));
      return true;
    },
    async delete(id) {
      await rm(path(id), { force: true });
    },
    acquireLock: (id, ttl) => locks.acquireLock(id, ttl),
  };
}
