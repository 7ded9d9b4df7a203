import { mkdir, readdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CompactError } from '../../core/errors.js';
import { newestArtifactFiles } from '../artifact-ref.js';
import { type SessionFolderOptions, sessionFolderName } from '../session-path.js';
import { tempsInFlight } from './archive-files.js';
import { assertPrivateFolder, makePrivateDir, PRIVATE_DIR_MODE } from './private-files.js';

/** The folder of a session's artifacts. */
export const ARTIFACT_DIR = 'artifacts';

/** A temp file of {@link fsStorage}'s atomic writes: `{name}.{pid}.{12 hex}.tmp`. */
const TEMP_FILE = /\.(\d+)\.[0-9a-f]{12}\.tmp$/;

/** Whether process `pid` is alive (a process of another user counts as alive). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException)?.code === 'EPERM';
  }
}

/** Session folders a writer remembers as opened (the one used longest ago is forgotten first). */
const MAX_OPEN_SESSIONS = 10_000;

/**
 * Removes the temp files a writer killed mid-write left in `dir` (issue 43): those of a process
 * that is gone, and this process's own but those of its writes in flight (a process restarted
 * under the same pid, as in a container). A missing folder has none; a file that cannot be removed stays. With
 * `of`, only the temp files of that file name (`{of}.{pid}.{12 hex}.tmp`: `--state` FILE's).
 */
export async function removeStaleTemps(dir: string, of?: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  await Promise.all(
    names.map(async (name) => {
      const match = TEMP_FILE.exec(name);
      if (!match || (of !== undefined && name.slice(0, match.index) !== of)) return;
      if (tempsInFlight.has(join(dir, name))) return;
      const pid = Number(match[1]);
      if (!Number.isInteger(pid) || pid <= 0) return;
      if (pid !== process.pid && processAlive(pid)) return;
      await unlink(join(dir, name)).catch(() => {});
    }),
  );
}

/** The folders of an fs archive: made and checked before a write, checked before a read. */
export interface ArchiveFolders {
  /** Makes a folder of the archive and the folders above it (0700), checking each. */
  ensureDir(dir: string): Promise<void>;
  /** The session's folder, made, checked and rid of dead writers' temp files once per writer. */
  sessionDir(sessionId: string): Promise<string>;
  /** The session's artifact folder, made and checked once per writer. */
  artifactDirFor(sessionDir: string): Promise<string>;
  /** The session's artifact folder, without creating anything (reads never create directories). */
  artifactDir(sessionId: string): string;
  /** The newest file of each reference in the session's artifact folder (none when it is missing). */
  artifactFiles(sessionId: string): Promise<Map<string, string>>;
}

/** Sets `key` as the entry of `map` used last, forgetting the one used longest ago past `max`. */
function useLast<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as string);
}

/**
 * The folders of the archive at `root` (see {@link fsStorage} for the checks). The last
 * `maxSessions` session folders used are remembered as opened; one forgotten is opened again.
 */
export function archiveFolders(
  root: string,
  options: SessionFolderOptions,
  maxSessions = MAX_OPEN_SESSIONS,
): ArchiveFolders {
  /** Artifact folders made (the last `maxSessions` used). */
  const madeDirs = new Map<string, true>();

  const ensureDir = (dir: string) => ensureArchiveDir(root, dir);

  /** Sessions opened by this writer: made, checked and rid of dead writers' temp files once. */
  const opened = new Map<string, Promise<void>>();
  const sessionDir = async (sessionId: string) => {
    if (typeof sessionId !== 'string') throw new CompactError('storage_failed', 'sessionId must be a string');
    const dir = join(root, sessionFolderName(sessionId, options));
    let opening = opened.get(dir);
    if (!opening) {
      opening = (async () => {
        await ensureDir(dir);
        await removeStaleTemps(dir);
        await removeStaleTemps(join(dir, ARTIFACT_DIR));
      })();
      opening.catch(() => opened.delete(dir));
    }
    useLast(opened, dir, opening, maxSessions);
    await opening;
    return dir;
  };

  const artifactDirFor = async (sessionDir: string) => {
    const dir = join(sessionDir, ARTIFACT_DIR);
    if (!madeDirs.has(dir)) await ensureDir(dir);
    useLast(madeDirs, dir, true, maxSessions);
    return dir;
  };

  /** The session's artifact folder, without creating anything (reads never create directories). */
  const artifactDir = (sessionId: string) => {
    if (typeof sessionId !== 'string') throw new CompactError('storage_failed', 'sessionId must be a string');
    return join(root, sessionFolderName(sessionId, options), ARTIFACT_DIR);
  };

  /** The newest file of each reference in the session's artifact folder (none when it is missing). */
  const artifactFiles = async (sessionId: string): Promise<Map<string, string>> => {
    const dir = artifactDir(sessionId);
    if (!(await readableArtifactDir(root, dir))) return new Map();
    return newestFilesIn(dir);
  };

  return { ensureDir, sessionDir, artifactDirFor, artifactDir, artifactFiles };
}

/**
 * Makes a folder of the archive at `root` (0700) and checks it: the root may be a link the user
 * set up, a folder inside it never; each must be owned by this user and not group/world-writable.
 */
async function ensureArchiveDir(root: string, dir: string): Promise<void> {
  if (dir === root || !dir.startsWith(root)) {
    await makePrivateDir(root);
    await assertPrivateFolder(root, 'archive root', true);
    return;
  }
  // The parent first: nothing is made inside a folder before it passed the check.
  await ensureArchiveDir(root, dirname(dir));
  await mkdir(dir, { mode: PRIVATE_DIR_MODE }).catch((error: NodeJS.ErrnoException) => {
    if (error?.code !== 'EEXIST') throw error;
  });
  await assertPrivateFolder(dir, dirname(dir) === root ? 'session folder' : 'archive folder');
}

/**
 * Whether a session's artifact folder `dir` can be read: false when it does not exist; a folder
 * on the way that is a link, not this user's, or group/world-writable is refused.
 */
async function readableArtifactDir(root: string, dir: string): Promise<boolean> {
  try {
    await assertPrivateFolder(root, 'archive root', true);
    await assertPrivateFolder(dirname(dir), 'session folder');
    await assertPrivateFolder(dir, 'archive folder');
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') return false;
    if (error instanceof CompactError) throw error;
    throw new CompactError('storage_failed', `fs: could not read ${dir}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The newest file of each reference in the artifact folder `dir` (none when it is missing). */
async function newestFilesIn(dir: string): Promise<Map<string, string>> {
  try {
    return newestArtifactFiles(await readdir(dir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') return new Map();
    throw new CompactError('storage_failed', `fs: could not list ${dir}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
