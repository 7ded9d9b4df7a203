import { randomBytes } from 'node:crypto';
import { link, mkdir, readdir, rename, rm, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CompactError } from '../../core/errors.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { describeCause } from '../../core/session/fail-open-store.js';
import type {
  ArchivedArtifact,
  ArchivedSummary,
  StorageAdapter,
} from '../../core/session/storage-adapter.js';
import {
  artifactFileName,
  assertArtifact,
  assertArtifactRef,
  parseStoredArtifact,
  refOfArtifactFile,
  sortArtifacts,
} from '../artifact-ref.js';
import { ARCHIVE_NAMES, type SessionFolderOptions, sessionFolderName } from '../session-path.js';
import {
  appendPrivateFile,
  assertPrivateFolder,
  makePrivateDir,
  PRIVATE_DIR_MODE,
  readFileNoFollow,
  writePrivateFile,
} from './private-files.js';

/** Options of {@link fsStorage}. */
export interface FsStorageOptions extends SessionFolderOptions {
  /**
   * The archive root; each session gets a directory below it.
   * @default '.compact/archive'
   */
  path?: string;
}

/** The folder of a session's artifacts. */
const ARTIFACT_DIR = 'artifacts';
/** Artifact files read at once by `listArtifacts`. */
const READ_CONCURRENCY = 16;

/** A unique, time-ordered id for a file moved aside: base-36 milliseconds, then random. */
function writeId(): string {
  return `${Date.now().toString(36).padStart(9, '0')}-${randomBytes(4).toString('hex')}`;
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
 * {path}/{session_id}/artifacts/{ref}.json               an original a placeholder names (recall)
 * ```
 *
 * Session ids are made safe for paths (see `safeSessionSegment`; `hashSessionIds` names folders by a keyed hash instead) and references are checked
 * against `ARTIFACT_REF_PATTERN` before they name a file. Transcripts, summaries and artifacts
 * are written atomically (a temp file, then a hard link), so a reader never sees half a file,
 * and never replace an earlier file: one already there (written before the session's state
 * was lost, or by another process) is moved aside to `{name}.{time}-{random}.prev` first.
 * Events are appended, one write per line, and appends to the same file are serialized in
 * this process, so lines of concurrent sessions or calls never interleave. Nothing is ever
 * deleted: clean up old sessions yourself (see SECURITY.md, retention).
 *
 * Only this user reads the archive: folders are created 0700 and files 0600 (an events file
 * left wider is set to 0600). A root, session or artifacts folder not owned by this process's
 * user, or writable by the group or others, is refused with a `storage_failed` error naming the
 * folder and its mode (nothing is written; the manager reports it as a `compact.error` and the
 * conversation goes on); the mode is never changed for you. Inside the root no symbolic link is
 * followed: a linked folder is refused, files are opened with `O_NOFOLLOW`, and a link planted
 * at a transcript's name is moved aside like any earlier file. The root itself may be a link.
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

  /**
   * Makes a folder of the archive (0700) and checks it: the root may be a link the user set
   * up, a folder inside it never; each must be owned by this user and not group/world-writable.
   */
  const ensureDir = async (dir: string): Promise<void> => {
    if (dir === root || !dir.startsWith(root)) {
      await makePrivateDir(root);
      await assertPrivateFolder(root, 'archive root', true);
      return;
    }
    // The parent first: nothing is made inside a folder before it passed the check.
    await ensureDir(dirname(dir));
    await mkdir(dir, { mode: PRIVATE_DIR_MODE }).catch((error: NodeJS.ErrnoException) => {
      if (error?.code !== 'EEXIST') throw error;
    });
    await assertPrivateFolder(dir, dirname(dir) === root ? 'session folder' : 'archive folder');
  };

  const sessionDir = async (sessionId: string) => {
    if (typeof sessionId !== 'string') throw new CompactError('storage_failed', 'sessionId must be a string');
    const dir = join(root, sessionFolderName(sessionId, options));
    if (!madeDirs.has(dir)) {
      await ensureDir(dir);
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
      // A failing mkdir is the real cause (EROFS, ENOSPC, ENOTDIR, EACCES), not the ENOENT.
      await ensureDir(dirname(file));
      await run();
    }
  };

  /**
   * Puts `temp` at `file` without ever replacing a file another write left there: `link` is
   * atomic and refuses an existing name, so an earlier file (from before a state loss, or by
   * another process) is first moved aside under a unique, time-ordered name
   * (`{name}.{time}-{random}.prev`), and `file` always holds the latest write.
   */
  const placeNoClobber = async (temp: string, file: string) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await link(temp, file);
        await unlink(temp).catch(() => {});
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException)?.code;
        if (code === 'EEXIST') {
          await rename(file, `${file}.${writeId()}.prev`).catch((moveError: NodeJS.ErrnoException) => {
            if (moveError?.code !== 'ENOENT') throw moveError;
          });
          continue;
        }
        // File systems without hard links: a plain rename (earlier files are still moved aside).
        if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV' || code === 'EOPNOTSUPP') {
          await rename(file, `${file}.${writeId()}.prev`).catch(() => {});
          await rename(temp, file);
          return;
        }
        throw error;
      }
    }
    throw new Error(`${file} kept being replaced by other writers`);
  };

  const writeAtomic = async (file: string, content: string) => {
    const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await withDir(file, () => writePrivateFile(temp, content, { what: 'archive file', exclusive: true }));
      await placeNoClobber(temp, file);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => {});
      if (error instanceof CompactError) throw error;
      throw new CompactError('storage_failed', `fs: could not write ${file}: ${describeCause(error)}`, {
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

  /** The session's artifact folder, without creating anything (reads never create directories). */
  const artifactDir = (sessionId: string) => {
    if (typeof sessionId !== 'string') throw new CompactError('storage_failed', 'sessionId must be a string');
    return join(root, sessionFolderName(sessionId, options), ARTIFACT_DIR);
  };

  /**
   * Whether the session's artifact folder can be read: false when it does not exist; a folder
   * on the way that is a link, not this user's, or group/world-writable is refused.
   */
  const readableArtifacts = async (sessionId: string): Promise<boolean> => {
    const dir = artifactDir(sessionId);
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
  };

  const readArtifact = async (sessionId: string, ref: string): Promise<ArchivedArtifact | undefined> => {
    const file = join(artifactDir(sessionId), artifactFileName(ref));
    let text: string;
    try {
      text = await readFileNoFollow(file);
    } catch (error) {
      // A link planted among the artifacts is not one of them: never followed, never returned.
      const code = (error as NodeJS.ErrnoException)?.code;
      if (code === 'ENOENT' || code === 'ELOOP') return undefined;
      throw new CompactError('storage_failed', `fs: could not read ${file}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return parseStoredArtifact(text, sessionId, ref);
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
          await withDir(file, () => appendPrivateFile(file, line, 'archive file'));
        } catch (error) {
          if (error instanceof CompactError) throw error;
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
    async saveArtifact(sessionId, artifact: ArchivedArtifact) {
      assertArtifact(sessionId, artifact);
      const dir = join(await sessionDir(sessionId), ARTIFACT_DIR);
      if (!madeDirs.has(dir)) {
        await ensureDir(dir);
        madeDirs.add(dir);
      }
      const file = join(dir, artifactFileName(artifact.ref));
      await writeAtomic(file, `${JSON.stringify(artifact)}\n`);
      return file;
    },
    async loadArtifact(sessionId, ref) {
      assertArtifactRef(ref);
      if (!(await readableArtifacts(sessionId))) return undefined;
      return readArtifact(sessionId, ref);
    },
    async listArtifacts(sessionId) {
      const dir = artifactDir(sessionId);
      if (!(await readableArtifacts(sessionId))) return [];
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') return [];
        throw new CompactError('storage_failed', `fs: could not list ${dir}: ${(error as Error).message}`, {
          cause: error,
        });
      }
      const refs = names.map(refOfArtifactFile).filter((ref): ref is string => ref !== undefined);
      const artifacts: ArchivedArtifact[] = [];
      for (let i = 0; i < refs.length; i += READ_CONCURRENCY) {
        const batch = await Promise.all(
          refs.slice(i, i + READ_CONCURRENCY).map((ref) => readArtifact(sessionId, ref)),
        );
        for (const artifact of batch) if (artifact) artifacts.push(artifact);
      }
      return sortArtifacts(artifacts);
    },
    async close() {
      await Promise.all([...tails.values()]);
    },
  };
}
