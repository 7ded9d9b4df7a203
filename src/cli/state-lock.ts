/**
 * The lock of a `--state FILE`: two CLI runs on one state file at once (two shells compacting
 * the same session) each read the same state and the last to write won, two texts of one
 * summary version. A run now holds `FILE.lock` from before it reads the state until after it
 * writes it back; a second run meanwhile fails at once with `concurrent_compaction` naming the
 * holder. A lock whose holder died (same host, its pid gone: a `kill -9`, a crash) is broken
 * and taken; one held on another host is never broken (its pid means nothing here).
 */
import { randomBytes } from 'node:crypto';
import { link, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { CompactError } from '../core/errors.js';
import { processAlive } from '../storage/fs/archive-folders.js';
import { writePrivateFile } from '../storage/fs/private-files.js';

/** What a lock file holds. */
interface LockHolder {
  pid: number;
  host: string;
  token: string;
  since: string;
}

async function readHolder(file: string): Promise<LockHolder | undefined> {
  try {
    const holder = JSON.parse(await readFile(file, 'utf8')) as LockHolder;
    return typeof holder?.token === 'string' ? holder : undefined;
  } catch {
    return undefined;
  }
}

/** True when the holder is a process of this host that no longer runs. */
function isStale(holder: LockHolder | undefined): boolean {
  if (holder === undefined) return false;
  return holder.host === hostname() && Number.isInteger(holder.pid) && !processAlive(holder.pid);
}

/**
 * Moves a stale lock aside, atomically (one of two runs breaking it at once wins); a lock that
 * turns out not to be the stale one read (taken meanwhile) is put back. True when broken.
 */
async function breakStale(lockPath: string, stale: LockHolder): Promise<boolean> {
  const aside = `${lockPath}.${process.pid}.${randomBytes(6).toString('hex')}.stale`;
  try {
    await rename(lockPath, aside);
  } catch {
    return false;
  }
  const moved = await readHolder(aside);
  if (moved?.token !== stale.token) await link(aside, lockPath).catch(() => {});
  await unlink(aside).catch(() => {});
  return moved?.token === stale.token;
}

/** Makes the lock file whole or not at all (a temp file linked in place); false when it exists. */
async function create(path: string, lockPath: string, holder: LockHolder): Promise<boolean> {
  const temporary = `${lockPath}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writePrivateFile(temporary, `${JSON.stringify(holder)}\n`, { what: '--state', exclusive: true });
    await link(temporary, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    if (error instanceof CompactError) throw error;
    // The same line as a state that cannot be written (state-file.ts): the lock is beside it.
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new CompactError('invalid_config', `--state ${path} cannot be written (${code})`, { cause: error });
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

/**
 * Takes the lock of state file `path`; resolves a function that releases it (only if it is
 * still this run's). Throws `concurrent_compaction` while another live run holds it.
 */
export async function lockStateFile(path: string): Promise<() => Promise<void>> {
  const lockPath = `${path}.lock`;
  const holder: LockHolder = {
    pid: process.pid,
    host: hostname(),
    token: randomBytes(12).toString('hex'),
    since: new Date().toISOString(),
  };
  const release = async () => {
    if ((await readHolder(lockPath))?.token === holder.token) await unlink(lockPath).catch(() => {});
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await create(path, lockPath, holder)) return release;
    const current = await readHolder(lockPath);
    if (isStale(current) && (await breakStale(lockPath, current!))) continue;
    if (current === undefined && attempt < 2) continue; // released (or being broken) meanwhile
    const who = current
      ? `pid ${current.pid} on ${current.host}, since ${current.since}`
      : 'a holder that cannot be read';
    throw new CompactError(
      'concurrent_compaction',
      `--state ${path} is in use by another run (${who}); run again when it ends, or remove ${lockPath} if no run holds it`,
    );
  }
  throw new CompactError(
    'concurrent_compaction',
    `--state ${path}: its lock ${lockPath} keeps changing hands`,
  );
}
