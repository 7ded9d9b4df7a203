/**
 * Files and folders only their owner reads: files are created 0600 and opened without
 * following a symbolic link (`O_NOFOLLOW`), folders are created 0700 and refused when they are
 * a link, not owned by this process's user, or writable by the group or others (another user
 * could swap a file or plant a link there). Used by the fs archive and by the CLI's report
 * page (`report --out`, `compact --report`).
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, stat } from 'node:fs/promises';
import { CompactError } from '../../core/errors.js';
import { makeDirs } from '../../core/make-dirs.js';
import { assertWriteNotAborted } from '../write-signal.js';

/** Mode of the files written. */
export const PRIVATE_FILE_MODE = 0o600;
/** Mode of the folders created. */
export const PRIVATE_DIR_MODE = 0o700;

/** `O_NOFOLLOW` where the platform has it (0 on Windows, which has no such flag). */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/** The refusal for a path that is a symbolic link. */
function symlinkError(path: string, what: string): CompactError {
  return new CompactError(
    'storage_failed',
    `fs: ${what} ${path} is a symbolic link; it is not followed (remove it, or point the setting at the real path)`,
  );
}

/** Why a folder is refused, or undefined when it is safe to write in. */
function unsafeFolder(dir: string, info: Stats, what: string): CompactError | undefined {
  if (!info.isDirectory()) return new CompactError('storage_failed', `fs: ${what} ${dir} is not a folder`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    return new CompactError(
      'storage_failed',
      `fs: ${what} ${dir} is owned by uid ${info.uid}, not by this process's user (uid ${uid}); refusing to write in it`,
    );
  }
  if (process.platform !== 'win32' && (info.mode & 0o022) !== 0) {
    return new CompactError(
      'storage_failed',
      `fs: ${what} ${dir} has mode ${octal(info.mode)}, writable by the group or others; refusing to write in it (chmod 700 it)`,
    );
  }
  return undefined;
}

/**
 * Checks a folder before writing in it: it must exist as a folder owned by this user and not
 * writable by the group or others. `followLink` lets the given path itself be a link (an
 * archive root the user points elsewhere); folders inside the archive never may.
 */
export async function assertPrivateFolder(dir: string, what: string, followLink = false): Promise<void> {
  const info = await (followLink ? stat(dir) : lstat(dir));
  if (info.isSymbolicLink()) throw symlinkError(dir, what);
  const problem = unsafeFolder(dir, info, what);
  if (problem) throw problem;
}

/**
 * `mkdir -p` with 0700 folders that names the real cause (EROFS, EACCES, ENOTDIR) and never
 * hangs (see `makeDirs`).
 */
export async function makePrivateDir(dir: string): Promise<void> {
  await makeDirs(dir, PRIVATE_DIR_MODE);
}

/** Opens `path` for writing without following a link at it; an ELOOP becomes a clear error. */
async function openNoFollow(path: string, flags: number, what: string) {
  try {
    return await open(path, flags | NO_FOLLOW, PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code === 'ELOOP') throw symlinkError(path, what);
    throw error;
  }
}

/** Opens a file, then makes sure it is 0600 (a file already there may have been wider). */
async function openPrivate(path: string, flags: number, what: string) {
  const handle = await openNoFollow(path, flags, what);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new CompactError('storage_failed', `fs: ${what} ${path} is not a regular file`);
    if ((info.mode & 0o777) !== PRIVATE_FILE_MODE) await handle.chmod(PRIVATE_FILE_MODE);
    return handle;
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/**
 * Writes `text` to `path` (created or truncated), 0600, never through a symbolic link.
 * `exclusive` refuses a file already there (for temp files); an aborted `signal` stops the
 * write between chunks (the file is then left partly written: callers write a temp file).
 */
export async function writePrivateFile(
  path: string,
  text: string,
  options: { what?: string; exclusive?: boolean; signal?: AbortSignal | undefined } = {},
): Promise<void> {
  const what = options.what ?? 'file';
  const flags =
    constants.O_WRONLY | constants.O_CREAT | (options.exclusive ? constants.O_EXCL : constants.O_TRUNC);
  const handle = await openPrivate(path, flags, what);
  try {
    await handle.writeFile(text, { encoding: 'utf8', ...(options.signal ? { signal: options.signal } : {}) });
  } finally {
    await handle.close();
  }
}

/**
 * Appends `text` to `path` (created 0600), never through a symbolic link. An append that fails
 * (a full disk writes part of it) is cut off again: a torn line would glue to the next append
 * and leave a broken line in the middle of a JSONL file, which no reader skips. An aborted
 * `signal` writes nothing (checked before the file is opened and once it is).
 */
export async function appendPrivateFile(
  path: string,
  text: string,
  what = 'file',
  signal?: AbortSignal,
): Promise<void> {
  assertWriteNotAborted(signal, `fs: ${path}`);
  const handle = await openPrivate(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, what);
  try {
    const { size } = await handle.stat();
    assertWriteNotAborted(signal, `fs: ${path}`);
    try {
      await handle.appendFile(text, 'utf8');
    } catch (error) {
      await handle.truncate(size).catch(() => {});
      throw error;
    }
  } finally {
    await handle.close();
  }
}

/** Reads `path` as UTF-8, never through a symbolic link (one there fails with code ELOOP). */
export async function readFileNoFollow(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | NO_FOLLOW);
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
