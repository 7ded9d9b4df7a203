import { randomBytes } from 'node:crypto';
import { link, rename, rm, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describeCause } from '../../core/describe-cause.js';
import { CompactError } from '../../core/errors.js';
import { assertWriteNotAborted } from '../write-signal.js';
import { appendPrivateFile, writePrivateFile } from './private-files.js';

/**
 * The fs archive's writes: a new file is written whole under a temp name and linked into
 * place (never replacing a file there), and appends to one file run one after another.
 */

/** Runs a write; if the file's folder vanished meanwhile (ENOENT), remakes it once. */
async function withDir(file: string, ensureDir: (dir: string) => Promise<void>, run: () => Promise<void>) {
  try {
    await run();
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code !== 'ENOENT') throw error;
    // A failing mkdir is the real cause (EROFS, ENOSPC, ENOTDIR, EACCES), not the ENOENT.
    await ensureDir(dirname(file));
    await run();
  }
}

/**
 * Puts `temp` at `file`, a name no write used before: `link` is atomic and refuses an
 * existing name, so a file already there (planted, or a link) is never replaced.
 */
async function placeNew(temp: string, file: string): Promise<void> {
  try {
    await link(temp, file);
    await unlink(temp).catch(() => {});
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    if (code === 'EEXIST')
      throw new CompactError(
        'storage_failed',
        `fs: ${file} already exists; archive files are never replaced`,
      );
    // File systems without hard links: a plain rename (the name is new, see archiveWriteId).
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV' || code === 'EOPNOTSUPP') {
      await rename(temp, file);
      return;
    }
    throw error;
  }
}

/** The temp files of this process's writes in flight (never taken for a dead writer's). */
export const tempsInFlight = new Set<string>();

/**
 * Writes `content` to `file`, a name no write used before, atomically (0600). Once `signal` is
 * aborted nothing more is written and the file is never put in place (its temp file is removed).
 */
export async function writeNewFile(
  file: string,
  content: string,
  ensureDir: (dir: string) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  assertWriteNotAborted(signal, `fs: ${file}`);
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  tempsInFlight.add(temp);
  try {
    await withDir(file, ensureDir, () =>
      writePrivateFile(temp, content, { what: 'archive file', exclusive: true, signal }),
    );
    assertWriteNotAborted(signal, `fs: ${file}`);
    await placeNew(temp, file);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {});
    if (error instanceof CompactError) throw error;
    throw new CompactError('storage_failed', `fs: could not write ${file}: ${describeCause(error)}`, {
      cause: error,
    });
  } finally {
    tempsInFlight.delete(temp);
  }
}

/** Appends `line` to `file` (0600), remaking its folder once if it vanished; nothing once `signal` is aborted. */
export async function appendWithDir(
  file: string,
  line: string,
  ensureDir: (dir: string) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  await withDir(file, ensureDir, () => appendPrivateFile(file, line, 'archive file', signal));
}

/**
 * Runs appends to one file one after another; `drain` waits for every append in flight, except
 * those whose `signal` was aborted (given up by the manager: one stuck on a hung mount would
 * hold `close()` for good).
 */
export function appendQueue(): {
  serialize(file: string, run: () => Promise<void>, signal?: AbortSignal): Promise<void>;
  drain(): Promise<void>;
} {
  const tails = new Map<string, Promise<void>>();
  const awaited = new Set<Promise<void>>();
  const serialize = (file: string, run: () => Promise<void>, signal?: AbortSignal): Promise<void> => {
    const previous = tails.get(file) ?? Promise.resolve();
    const next = previous.then(run, run);
    const tail = next.catch(() => {});
    tails.set(file, tail);
    void tail.then(() => {
      if (tails.get(file) === tail) tails.delete(file);
    });
    const done = signal ? Promise.race([tail, aborted(signal)]) : tail;
    awaited.add(done);
    void done.then(() => awaited.delete(done));
    return next;
  };

  return {
    serialize,
    drain: async () => {
      await Promise.all([...awaited]);
    },
  };
}

/** Resolves once `signal` is aborted. */
function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
