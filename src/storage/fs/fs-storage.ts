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
  newestArtifactFiles,
  parseStoredArtifact,
  sortArtifacts,
} from '../artifact-ref.js';
import {
  ARCHIVE_NAMES,
  archiveWriteId,
  highestSummaryStep,
  type SessionFolderOptions,
  sessionFolderName,
} from '../session-path.js';
import { transcriptParts } from '../transcript-parts.js';
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

/** A temp file of {@link fsStorage}'s atomic writes: `{name}.{pid}.{12 hex}.tmp`. */
const TEMP_FILE = /\.(\d+)\.[0-9a-f]{12}\.tmp$/;

/** Whether process `pid` is alive (a process of another user counts as alive). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException)?.code === 'EPERM';
  }
}

/**
 * Removes the temp files a writer killed mid-write left in `dir` (issue 43): those of a process
 * that is gone, and this process's own (none is in flight before the session is opened: every
 * write waits for it). A missing folder has none; a file that cannot be removed stays.
 */
async function removeStaleTemps(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  await Promise.all(
    names.map(async (name) => {
      const pid = Number(TEMP_FILE.exec(name)?.[1]);
      if (!Number.isInteger(pid) || pid <= 0) return;
      if (pid !== process.pid && processAlive(pid)) return;
      await unlink(join(dir, name)).catch(() => {});
    }),
  );
}

/** The fs adapter's defaults. */
export const DEFAULT_FS_STORAGE_OPTIONS = Object.freeze({ path: '.compact/archive' });

/**
 * Archives on the local file system (the default adapter):
 *
 * ```
 * {path}/{session_id}/transcript-pre-compact-001-{id}.jsonl       full history before a compaction (v1 next)
 * {path}/{session_id}/transcript-pre-compact-001-{id}.part.jsonl  the same, as the messages after those of the last one
 * {path}/{session_id}/summary-001-{id}.json                      summary v1
 * {path}/{session_id}/events.jsonl                               every event, one JSON per line
 * {path}/{session_id}/artifacts/{ref}.{id}.json                  an original a placeholder names (recall)
 * ```
 *
 * The archive only grows: every write gets a name nobody wrote before (`{id}` is a write id:
 * base-36 milliseconds and random digits, so names sort in write order), nothing is renamed or
 * rewritten. A history that extends the one archived before it is written as a part holding
 * only the new messages, its first line `{"continues": name, "from": n}` naming the transcript
 * it continues (read back whole with `readTranscriptLines`); so a session archives each message
 * about once. Saving an artifact's reference again writes a new file; reads return the newest.
 * Archives written before write ids (`summary-001.json`, `{ref}.json`, `.prev` files) are read
 * as they are.
 *
 * Session ids are made safe for paths (see `safeSessionSegment`; `hashSessionIds` names folders by a keyed hash instead) and references are checked
 * against `ARTIFACT_REF_PATTERN` before they name a file. Transcripts, summaries and artifacts
 * are written atomically (a temp file, then a hard link), so a reader never sees half a file,
 * and never replace a file already there (that write fails with `storage_failed`). The temp
 * files of a writer killed mid-write are removed when a writer next opens the session.
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
 * at a file's name is never written through. The root itself may be a link.
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
  const parts = transcriptParts();

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

  /** Sessions opened by this writer: made, checked and rid of dead writers' temp files once. */
  const opened = new Map<string, Promise<void>>();
  const sessionDir = async (sessionId: string) => {
    if (typeof sessionId !== 'string') throw new CompactError('storage_failed', 'sessionId must be a string');
    const dir = join(root, sessionFolderName(sessionId, options));
    let opening = opened.get(dir);
    if (!opening) {
      opening = (async () => {
        await ensureDir(dir);
        madeDirs.add(dir);
        await removeStaleTemps(dir);
        await removeStaleTemps(join(dir, ARTIFACT_DIR));
      })();
      opened.set(dir, opening);
      opening.catch(() => opened.delete(dir));
    }
    await opening;
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
   * Puts `temp` at `file`, a name no write used before: `link` is atomic and refuses an
   * existing name, so a file already there (planted, or a link) is never replaced.
   */
  const placeNew = async (temp: string, file: string) => {
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
  };

  const writeAtomic = async (file: string, content: string) => {
    const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await withDir(file, () => writePrivateFile(temp, content, { what: 'archive file', exclusive: true }));
      await placeNew(temp, file);
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

  /** The newest file of each reference in the session's artifact folder (none when it is missing). */
  const artifactFiles = async (sessionId: string): Promise<Map<string, string>> => {
    const dir = artifactDir(sessionId);
    if (!(await readableArtifacts(sessionId))) return new Map();
    try {
      return newestArtifactFiles(await readdir(dir));
    } catch (error) {
      if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') return new Map();
      throw new CompactError('storage_failed', `fs: could not list ${dir}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  };

  const readArtifact = async (
    sessionId: string,
    ref: string,
    name: string,
  ): Promise<ArchivedArtifact | undefined> => {
    const file = join(artifactDir(sessionId), name);
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
      const dir = await sessionDir(sessionId);
      const planned = parts.plan(dir, transcript, step);
      const file = join(dir, planned.name);
      await writeAtomic(file, planned.body);
      planned.commit();
      return file;
    },
    async saveSummary(sessionId, summary: ArchivedSummary, step) {
      const file = join(await sessionDir(sessionId), ARCHIVE_NAMES.summary(step, archiveWriteId()));
      await writeAtomic(file, `${JSON.stringify(summary, null, 2)}\n`);
      return file;
    },
    async latestSummaryStep(sessionId) {
      if (typeof sessionId !== 'string')
        throw new CompactError('storage_failed', 'sessionId must be a string');
      let names: string[];
      try {
        names = await readdir(join(root, sessionFolderName(sessionId, options)));
      } catch (error) {
        if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') return undefined;
        throw new CompactError(
          'storage_failed',
          `fs: could not list the archive of a session: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      return highestSummaryStep(names);
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
      const file = join(dir, artifactFileName(artifact.ref, archiveWriteId()));
      await writeAtomic(file, `${JSON.stringify(artifact)}\n`);
      return file;
    },
    async loadArtifact(sessionId, ref) {
      assertArtifactRef(ref);
      const name = (await artifactFiles(sessionId)).get(ref);
      return name === undefined ? undefined : readArtifact(sessionId, ref, name);
    },
    async listArtifacts(sessionId) {
      const files = [...(await artifactFiles(sessionId))];
      const artifacts: ArchivedArtifact[] = [];
      for (let i = 0; i < files.length; i += READ_CONCURRENCY) {
        const batch = await Promise.all(
          files.slice(i, i + READ_CONCURRENCY).map(([ref, name]) => readArtifact(sessionId, ref, name)),
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
