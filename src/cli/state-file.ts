/**
 * `--state FILE`: the session's compaction state (summary version, protected set, covered
 * ids, rewrites) kept in a JSON file between CLI runs, so that a later run resumes at the
 * same version with the same protected messages.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { describeCause } from '../core/describe-cause.js';
import { CompactError } from '../core/errors.js';
import { unpackState } from '../core/session/packed-state.js';
import { MemorySessionStore, type SessionState } from '../core/session/session-store.js';
import { storedStateProblem } from '../core/session/session-store-checks.js';
import { removeStaleTemps } from '../storage/fs/archive-folders.js';
import { writePrivateFile } from '../storage/fs/private-files.js';

/**
 * Reads the state file into a fresh memory store (an absent file starts a new session). The
 * temp files of `path` a run killed mid-write left (they hold a summary) are removed first.
 */
export async function loadStateFile(path: string, sessionId: string): Promise<MemorySessionStore> {
  const store = new MemorySessionStore();
  await removeStaleTemps(dirname(path), basename(path));
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

/**
 * Writes the session's state back (atomically: a temporary file, then a rename), 0600 as the
 * archive's files (it holds the summary). A write that fails (a full disk) removes its
 * temporary file and is an `invalid_config` error naming `--state`.
 */
export async function saveStateFile(
  path: string,
  store: MemorySessionStore,
  sessionId: string,
): Promise<void> {
  const state = await store.get(sessionId);
  if (!state) return;
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writePrivateFile(temporary, `${JSON.stringify(state, null, 2)}\n`, {
      what: '--state',
      exclusive: true,
    });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    if (error instanceof CompactError) throw error;
    // The code alone: Node's message names the temporary file, which the user never made.
    const code = (error as NodeJS.ErrnoException).code ?? describeCause(error);
    throw new CompactError('invalid_config', `--state ${path} cannot be written (${code})`, {
      cause: error,
    });
  }
}
