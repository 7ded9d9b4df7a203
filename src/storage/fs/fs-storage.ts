import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CompactError } from '../../core/errors.js';
import type { AnyCompactEvent } from '../../core/events.js';
import type { ArchivedSummary, StorageAdapter } from '../../core/storage-adapter.js';
import { ARCHIVE_NAMES, safeSessionSegment } from '../session-path.js';

/** Options of {@link fsStorage}. */
export interface FsStorageOptions {
  /**
   * The archive root; each session gets a directory below it.
   * @default '.compact/archive'
   */
  path?: string;
}

/** The fs adapter's defaults. */
export const DEFAULT_FS_STORAGE_OPTIONS = Object.freeze({ path: '.compact/archive' });

/**
 * Archives on the local file system (the default adapter):
 *
 * ```
 * {path}/{session_id}/transcript-pre-compact-001.jsonl   full history before compaction 1
 * {path}/{session_id}/summary-001.json                   summary of compaction 1
 * {path}/{session_id}/events.jsonl                       every event, one JSON per line
 * ```
 *
 * Session ids are made safe for paths (see `safeSessionSegment`). Transcripts and summaries
 * are written atomically (a temp file, then `rename`), so a reader never sees half a file.
 * Events are appended, one write per line, and appends to the same file are serialized in
 * this process, so lines of concurrent sessions or calls never interleave. Nothing is ever
 * deleted: clean up old sessions yourself (see SECURITY.md, retention).
 *
 * @example
 * ```ts
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000,
 *   storage: fsStorage({ path: '.compact/archive' }) });
 * ```
 */
export function fsStorage(options: FsStorageOptions = {}): StorageAdapter {
  const root = resolve(options.path ?? DEFAULT_FS_STORAGE_OPTIONS.path);
  const tails = new Map<string, Promise<void>>();
  const madeDirs = new Set<string>();

  const sessionDir = async (sessionId: string) => {
    if (typeof sessionId !== 'string') throw new CompactError('storage_failed', 'sessionId must be a string');
    const dir = join(root, safeSessionSegment(sessionId));
    if (!madeDirs.has(dir)) {
      await mkdir(dir, { recursive: true });
      madeDirs.add(dir);
    }
    return dir;
  };

  /** Runs a write; if the session directory vanished meanwhile (ENOENT), recreates it once. */
  const withDir = async (file: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (error) {
      if ((error as NodeJS.ErrnoException)?.code !== 'ENOENT') throw error;
      await mkdir(dirname(file), { recursive: true });
      await run();
    }
  };

  const writeAtomic = async (file: string, content: string) => {
    const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await withDir(file, () => writeFile(temp, content, { encoding: 'utf8', mode: 0o600 }));
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => {});
      throw new CompactError('storage_failed', `fs: could not write ${file}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  };

  /** Runs appends to one file one after another. */
  const serialize = (file: string, run: () => Promise<void>): Promise<void> => {
    const previous = tails.get(file) ?? Promise.resolve();
    const next = previous.then(run, run);
    const tail = next.catch(() => {});
    tails.set(file, tail);
    void tail.then(() => {
      if (tails.get(file) === tail) tails.delete(file);
    });
    return next;
  };

  return {
    name: 'fs',
    async saveTranscript(sessionId, transcript, step) {
      const file = join(await sessionDir(sessionId), ARCHIVE_NAMES.transcript(step));
      const lines = transcript.map((message) => JSON.stringify(message ?? null));
      await writeAtomic(file, lines.length > 0 ? `${lines.join('\n')}\n` : '');
      return file;
    },
    async saveSummary(sessionId, summary: ArchivedSummary, step) {
      const file = join(await sessionDir(sessionId), ARCHIVE_NAMES.summary(step));
      await writeAtomic(file, `${JSON.stringify(summary, null, 2)}\n`);
      return file;
    },
    async saveEvent(sessionId, event: AnyCompactEvent) {
      const file = join(await sessionDir(sessionId), ARCHIVE_NAMES.events);
      const line = `${JSON.stringify(event)}\n`;
      await serialize(file, async () => {
        try {
          await withDir(file, () => appendFile(file, line, { encoding: 'utf8', mode: 0o600 }));
        } catch (error) {
          throw new CompactError(
            'storage_failed',
            `fs: could not append to ${file}: ${(error as Error).message}`,
            {
              cause: error,
            },
          );
        }
      });
    },
    async close() {
      await Promise.all([...tails.values()]);
    },
  };
}
