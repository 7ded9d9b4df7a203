/**
 * Child process of the crash test (issue 43): a session that compacts over and over with the fs
 * archive and a state store kept in a JSON file (so a restart finds it). It stops dead at a
 * chosen point and prints `HALT <what>`; the test SIGKILLs it there:
 *
 * - `state N`: right after the Nth state write landed (what the archive holds must match it);
 * - `link N`: in the Nth archive write, its temp file written but not yet put in place.
 *
 * argv: archive folder, state file, mode, N.
 */
import { writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { MemorySessionStore, type SessionState } from '../../src/core/session/session-store.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';

const [folder, stateFile, mode, at] = process.argv.slice(2) as [string, string, string, string];
const halt = (what: string): Promise<never> => {
  process.stdout.write(`HALT ${what}\n`);
  // Stays here until killed (an interval keeps the process alive).
  setInterval(() => {}, 1 << 30);
  return new Promise<never>(() => {});
};

let writes = 0;
class FileBackedStore extends MemorySessionStore {
  override async set(sessionId: string, state: SessionState, options?: object): Promise<boolean> {
    const ok = await super.set(sessionId, state, options);
    if (ok) writeFileSync(stateFile, JSON.stringify(await super.get(sessionId)));
    if (ok && mode === 'state' && ++writes === Number(at)) await halt(`state v${state.version}`);
    return ok;
  }
}

if (mode === 'link') {
  const promises = createRequire(import.meta.url)('node:fs/promises') as {
    link: typeof import('node:fs/promises').link;
  };
  const link = promises.link;
  let links = 0;
  promises.link = async (from, to) => {
    if (++links === Number(at)) await halt(`link ${String(to)}`);
    return link(from, to);
  };
  syncBuiltinESMExports();
}

const manager = new CompactManager({
  model: 'gpt-4o',
  maxContextTokens: 4_000,
  store: new FileBackedStore(),
  storage: fsStorage({ path: folder }),
});
const history: unknown[] = [{ role: 'user', content: 'Work through the backlog.' }];
for (let turn = 0; turn < 400; turn++) {
  history.push(
    {
      role: 'user',
      content: `Ticket T-${turn}: ${'the queue on web-7 backs up after deploys; '.repeat(20)}`,
    },
    {
      role: 'assistant',
      content: `T-${turn} noted: ${'checked the queue depth and the deploy log; '.repeat(16)}`,
    },
  );
  await manager.preflight('crash', history);
}
process.stdout.write('DONE\n');
