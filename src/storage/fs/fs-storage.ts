import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type {
  ArchivedArtifact,
  ArchivedSummary,
  StorageAdapter,
} from '../../core/archive/storage-adapter.js';
import { CompactError } from '../../core/errors.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import {
  artifactFileName,
  assertArtifact,
  assertArtifactRef,
  parseStoredArtifact,
  readArtifacts,
} from '../artifact-ref.js';
import {
  ARCHIVE_NAMES,
  archiveWriteId,
  highestSummaryStep,
  type SessionFolderOptions,
  sessionFolderName,
} from '../session-path.js';
import { transcriptParts } from '../transcript-parts.js';
import { appendQueue, appendWithDir, writeNewFile } from './archive-files.js';
import { archiveFolders } from './archive-folders.js';
import { readFileNoFollow } from './private-files.js';

/** Options of {@link fsStorage}. */
export interface FsStorageOptions extends SessionFolderOptions {
  /**
   * The archive root; each session gets a directory below it.
   * @default '.compact/archive'
   */
  path?: string;
}

/** Artifact files read at once by `listArtifacts`. */
const READ_CONCURRENCY = 16;

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
 * files of a writer killed mid-write are removed when a writer next opens the session. A write
 * whose `signal` is aborted (the manager gave it up) writes nothing more and puts no file in
 * place; an event line not yet appended is not appended, and `close()` does not wait for it.
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
  assertFsOptions(options);
  const root = resolve(options.path ?? DEFAULT_FS_STORAGE_OPTIONS.path);
  const folders = archiveFolders(root, options);
  const { ensureDir, sessionDir, artifactDir, artifactFiles } = folders;
  const appends = appendQueue();
  const parts = transcriptParts();
  const writeAtomic = (file: string, content: string, signal: AbortSignal | undefined) =>
    writeNewFile(file, content, ensureDir, signal);

  const readArtifact = async (sessionId: string, ref: string, name: string, unreadable?: 'throw') =>
    readArtifactFile(join(artifactDir(sessionId), name), sessionId, ref, unreadable);

  return {
    name: 'fs',
    async saveTranscript(sessionId, transcript, step, options) {
      const dir = await sessionDir(sessionId);
      const planned = parts.plan(dir, transcript, step);
      const file = join(dir, planned.name);
      await writeAtomic(file, planned.body, options?.signal);
      planned.commit();
      return file;
    },
    async saveSummary(sessionId, summary: ArchivedSummary, step, options) {
      const file = join(await sessionDir(sessionId), ARCHIVE_NAMES.summary(step, archiveWriteId()));
      await writeAtomic(file, `${JSON.stringify(summary, null, 2)}\n`, options?.signal);
      return file;
    },
    latestSummaryStep: (sessionId) => latestSummaryStepIn(root, sessionId, options),
    async saveEvent(sessionId, event: AnyCompactEvent, options) {
      const file = join(await sessionDir(sessionId), ARCHIVE_NAMES.events);
      const line = `${JSON.stringify(event)}\n`;
      // An append given up while queued behind a hung one is not made when its turn comes.
      await appends.serialize(
        file,
        () => appendEventLine(file, line, ensureDir, options?.signal),
        options?.signal,
      );
    },
    async saveArtifact(sessionId, artifact: ArchivedArtifact, options) {
      assertArtifact(sessionId, artifact);
      const dir = await folders.artifactDirFor(await sessionDir(sessionId));
      const file = join(dir, artifactFileName(artifact.ref, archiveWriteId()));
      await writeAtomic(file, `${JSON.stringify(artifact)}\n`, options?.signal);
      return file;
    },
    async loadArtifact(sessionId, ref) {
      assertArtifactRef(ref);
      const name = (await artifactFiles(sessionId)).get(ref);
      return name === undefined ? undefined : readArtifact(sessionId, ref, name, 'throw');
    },
    async listArtifacts(sessionId) {
      const read = (ref: string, name: string) => readArtifact(sessionId, ref, name);
      return readArtifacts(await artifactFiles(sessionId), read, READ_CONCURRENCY);
    },
    async close() {
      await appends.drain();
    },
  };
}

/** The options are an object with a non-empty `path` and a boolean `hashSessionIds` (`invalid_config` naming the field). */
function assertFsOptions(options: FsStorageOptions): void {
  const refuse = (field: string, message: string) =>
    new CompactError('invalid_config', `fsStorage: ${field ? `${field} ` : 'options '}${message}`, {
      issues: [{ path: ['storage', ...(field ? [field] : [])], message }],
    });
  if (options === null || typeof options !== 'object') throw refuse('', 'must be an object');
  if (options.path !== undefined && (typeof options.path !== 'string' || options.path === ''))
    throw refuse('path', 'must be a non-empty string');
  if (options.hashSessionIds !== undefined && typeof options.hashSessionIds !== 'boolean')
    throw refuse('hashSessionIds', 'must be a boolean');
}

/** One artifact file, read without following a link; undefined when it is gone or a link. */
async function readArtifactFile(
  file: string,
  sessionId: string,
  ref: string,
  unreadable?: 'throw',
): Promise<ArchivedArtifact | undefined> {
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
  return parseStoredArtifact(text, sessionId, ref, unreadable);
}

/** The highest summary step archived for a session under `root`, or undefined (no folder yet). */
async function latestSummaryStepIn(
  root: string,
  sessionId: string,
  options: SessionFolderOptions,
): Promise<number | undefined> {
  if (typeof sessionId !== 'string') throw new CompactError('storage_failed', 'sessionId must be a string');
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
}

/** Appends one event line (the caller serializes appends per file); a failure is `storage_failed`. */
async function appendEventLine(
  file: string,
  line: string,
  ensureDir: Parameters<typeof appendWithDir>[2],
  signal: AbortSignal | undefined,
): Promise<void> {
  try {
    await appendWithDir(file, line, ensureDir, signal);
  } catch (error) {
    if (error instanceof CompactError) throw error;
    throw new CompactError('storage_failed', `fs: could not append to ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
