/**
 * `--state FILE`: the session's compaction state (summary version, protected set, covered
 * ids, rewrites) kept in a JSON file between CLI runs, so that a later run resumes at the
 * same version with the same protected messages.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { CompactError } from '../core/errors.js';
import { unpackState } from '../core/session/packed-state.js';
import { MemorySessionStore, type SessionState } from '../core/session/session-store.js';
import { storedStateProblem } from '../core/session/session-store-checks.js';

/** Reads the state file into a fresh memory store (an absent file starts a new session). */
export async function loadStateFile(path: string, sessionId: string): Promise<MemorySessionStore> {
  const store = new MemorySessionStore();
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return store;
    throw new CompactError('invalid_config', `--state ${path} cannot be read: ${(error as Error).message}`);
  }
  let state: unknown;
  try {
    state = JSON.parse(text);
  } catch (error) {
    throw new CompactError('invalid_config', `--state ${path} is not JSON: ${(error as Error).message}`);
  }
  // The same schema check as a state read back from a shared store: a wrong shape is a typed
  // error naming the field (a summary whose text is not a string used to crash the run).
  const problem = storedStateProblem(state);
  if (problem !== undefined)
    throw new CompactError('invalid_config', `--state ${path} is not a session state: ${problem}`);
  // A state copied from a shared store may hold its lists packed (packed-state.ts).
  await store.set(sessionId, { ...unpackState(state as SessionState), sessionId });
  return store;
}

/** Writes the session's state back (atomically: a temporary file, then a rename). */
export async function saveStateFile(
  path: string,
  store: MemorySessionStore,
  sessionId: string,
): Promise<void> {
  const state = await store.get(sessionId);
  if (!state) return;
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`);
  await rename(temporary, path);
}
