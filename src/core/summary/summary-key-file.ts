import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { CompactError } from '../errors.js';
import { makeDirsSync } from '../make-dirs.js';

/**
 * The summary key file (issue 44 point 1): its key is refused when shorter than
 * {@link MIN_SUMMARY_KEY_BYTES} (an empty file is no key), the file and its folder are refused
 * when another user owns them or the group or others can write them (as archive roots are,
 * storage/fs), and a new file is created atomically: a temporary file created exclusively
 * (0600, in a 0700 folder), written, flushed to disk, then renamed into place, so no process
 * ever reads it empty.
 */

/** The least key material a summary secret may have, in bytes (an HMAC-SHA256 key). */
export const MIN_SUMMARY_KEY_BYTES = 32;

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/** A refused key: `invalid_config`, naming where the key came from. */
export function weakKeyError(source: string, problem: string): CompactError {
  return new CompactError('invalid_config', `summary key from ${source}: ${problem}`, {
    issues: [{ path: [source], message: problem }],
  });
}

/** Why a key is refused, or undefined. */
export function keyProblem(key: string): string | undefined {
  const bytes = Buffer.byteLength(key.trim(), 'utf8');
  if (bytes === 0) return 'is empty';
  if (bytes < MIN_SUMMARY_KEY_BYTES) {
    return `has ${bytes} bytes of key material, at least ${MIN_SUMMARY_KEY_BYTES} are needed`;
  }
  return undefined;
}

/** Another user's, or writable by the group or others. */
function unsafe(info: Stats, what: string, path: string, source: string): void {
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    throw weakKeyError(
      source,
      `the ${what} ${path} is owned by uid ${info.uid}, not by this user (uid ${uid})`,
    );
  }
  if (process.platform !== 'win32' && (info.mode & 0o022) !== 0) {
    throw weakKeyError(
      source,
      `the ${what} ${path} has mode ${octal(info.mode)}, writable by the group or others (chmod ${what === 'folder' ? 700 : 600} it)`,
    );
  }
}

/** Reads the key file, or creates it with a fresh random key; refuses a weak or exposed one. */
export function keyFromFile(file: string, source: string): string {
  const folder = dirname(file);
  makeDirsSync(folder, 0o700);
  const folderInfo = lstatSync(folder);
  if (folderInfo.isSymbolicLink() || !folderInfo.isDirectory()) {
    throw weakKeyError(source, `the folder ${folder} is not a plain folder`);
  }
  unsafe(folderInfo, 'folder', folder, source);
  const existing = readExisting(file, source);
  if (existing !== undefined) return existing;
  const key = randomBytes(32).toString('base64url');
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeSync(fd, `${key}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    // A process that got there first keeps its key: ours is dropped and its is read back.
    const raced = readExisting(file, source);
    if (raced !== undefined) return raced;
    renameSync(temp, file);
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // renamed into place
    }
  }
  return readExisting(file, source) ?? key;
}

/** The key of an existing file (checked), or undefined when there is none. */
function readExisting(file: string, source: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw weakKeyError(source, `the key file ${file} is a symbolic link`);
    throw error;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw weakKeyError(source, `the key file ${file} is not a file`);
    unsafe(info, 'key file', file, source);
    if ((info.mode & 0o044) !== 0) {
      throw weakKeyError(
        source,
        `the key file ${file} has mode ${octal(info.mode)}, readable by others (chmod 600 it)`,
      );
    }
    const key = readFileSync(fd, 'utf8').trim();
    const problem = keyProblem(key);
    if (problem) throw weakKeyError(source, `the key file ${file} ${problem}`);
    return key;
  } finally {
    closeSync(fd);
  }
}
