import { createHash, randomBytes } from 'node:crypto';
import { CompactError } from '../core/errors.js';
import { hashSessionId } from '../core/session/hash-session-id.js';

/** Longest encoded session id kept whole; longer ones are cut and get a hash suffix. */
const MAX_SEGMENT = 100;
const SAFE = /^[A-Za-z0-9_-]$/;

function hash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

/**
 * Turns a session id into one safe path segment (a directory name or an S3 key part).
 *
 * - Letters, digits, `_` and `-` are kept; `.` is kept except at the start; every other
 *   character (separators, `%`, `~`, control characters, non-ASCII) is percent-encoded as
 *   UTF-8 (`a/b` becomes `a%2Fb`), so the segment never contains `..` as a name, `/`, `\`
 *   or control characters, and distinct ids give distinct segments.
 * - An id with upper-case letters gets `~` and a hash of the id appended, so two ids that
 *   differ only in case never share a directory on a case-insensitive file system (`~`
 *   never occurs otherwise, so the suffix cannot be forged).
 * - An id whose encoding is longer than 100 characters is cut and gets the hash too.
 *
 * @example
 * ```ts
 * safeSessionSegment('session-abc-123'); // 'session-abc-123'
 * safeSessionSegment('../etc/passwd');   // '%2E.%2Fetc%2Fpasswd'
 * ```
 */
export function safeSessionSegment(sessionId: string): string {
  let encoded = '';
  let index = 0;
  for (const char of sessionId) {
    if (SAFE.test(char) || (char === '.' && index > 0)) encoded += char;
    else {
      for (const byte of Buffer.from(char, 'utf8'))
        encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
    index += 1;
  }
  if (encoded === '') return '~empty';
  const needsHash = /[A-Z]/.test(sessionId) || encoded.length > MAX_SEGMENT;
  if (!needsHash) return encoded;
  return `${encoded.slice(0, MAX_SEGMENT)}~${hash(sessionId)}`;
}

/** How an archive adapter names a session's folder (or key prefix). */
export interface SessionFolderOptions {
  /**
   * Name each session's folder by {@link hashSessionId} (a keyed hash of the id) instead of
   * the id, so the archive does not name the user. Folders written before the switch keep
   * their old names (see SECURITY.md, migration).
   * @default false
   */
  hashSessionIds?: boolean;
  /**
   * The key of that hash; use the exporters' key so events and folders match.
   * @default process.env.COMPACT_SESSION_HASH_KEY (none: an unkeyed hash and a warning)
   */
  hashKey?: string;
}

/** The folder name (one safe path segment) of a session's archive. */
export function sessionFolderName(sessionId: string, options: SessionFolderOptions = {}): string {
  return options.hashSessionIds ? hashSessionId(sessionId, options.hashKey) : safeSessionSegment(sessionId);
}

/** Zero-pads a compaction step to three digits (`7` -> `007`), as the archive names need. */
export function padStep(step: number): string {
  if (!Number.isInteger(step) || step < 0) {
    throw new CompactError('storage_failed', `step must be a non-negative integer, got ${step}`);
  }
  return String(step).padStart(3, '0');
}

/** The last time an archive write id used in this process (ids stay strictly increasing). */
let lastWriteTime = 0;

/**
 * A new archive write id: base-36 milliseconds (9 digits, strictly increasing in this process),
 * a dash and 8 random hex digits. Ids sort in write order, and two writes never share one, so
 * every write of the archive gets a name nobody wrote before.
 */
export function archiveWriteId(): string {
  lastWriteTime = Math.max(Date.now(), lastWriteTime + 1);
  return `${lastWriteTime.toString(36).padStart(9, '0')}-${randomBytes(4).toString('hex')}`;
}

/**
 * The archive's file names, shared by every adapter. Every write gets its own name (a compaction
 * that only clears keeps the summary version, so the step alone would repeat): the step, then a
 * write id from {@link archiveWriteId}. A transcript whose history extends the one archived
 * before it is written as a part (`.part.jsonl`): a first line `{"continues": name, "from": n}`,
 * then only the messages after the first `n` (see `transcript-parts.ts`).
 */
export const ARCHIVE_NAMES = Object.freeze({
  transcript: (step: number, id: string) => `transcript-pre-compact-${padStep(step)}-${id}.jsonl`,
  transcriptPart: (step: number, id: string) => `transcript-pre-compact-${padStep(step)}-${id}.part.jsonl`,
  summary: (step: number, id: string) => `summary-${padStep(step)}-${id}.json`,
  events: 'events.jsonl',
});

/** A transcript or summary file name of the archive, read back ({@link parseArchiveName}). */
export interface ArchiveName {
  kind: 'transcript' | 'summary';
  step: number;
  /** The write id; `undefined` in the layout before write ids (`summary-001.json`). */
  id?: string;
  /** A transcript part (only the messages after those of the transcript it continues). */
  part: boolean;
}

const NAME =
  /^(transcript-pre-compact|summary)-(\d{3,})(?:-([0-9a-z]{9,}-[0-9a-f]{8}))?(\.part)?\.(jsonl|json)$/;

/**
 * Reads an archive file name, this layout's or the one before write ids
 * (`transcript-pre-compact-001.jsonl`); `undefined` for any other name (events, files moved
 * aside as `.prev`, temp files).
 */
export function parseArchiveName(name: string): ArchiveName | undefined {
  const match = NAME.exec(name);
  if (!match) return undefined;
  const kind = match[1] === 'summary' ? 'summary' : 'transcript';
  if ((kind === 'summary') !== (match[5] === 'json')) return undefined;
  if (match[4] && (kind !== 'transcript' || !match[3])) return undefined;
  return {
    kind,
    step: Number(match[2]),
    part: match[4] !== undefined,
    ...(match[3] ? { id: match[3] } : {}),
  };
}

/**
 * The newest of `names` of one kind: the highest step (the summary version the file belongs
 * to; versions never go down), then, among the writes of one step (a compaction that only
 * cleared keeps the version), a file with a write id after one without and the later id.
 * Never by write id first: ids are time-ordered in one process only, and a process whose clock
 * ran ahead named an older version later. `undefined` when there is none.
 */
export function newestArchiveName(names: readonly string[], kind: ArchiveName['kind']): string | undefined {
  let best: { name: string; parsed: ArchiveName } | undefined;
  for (const name of names) {
    const parsed = parseArchiveName(name);
    if (parsed?.kind !== kind) continue;
    if (!best || compareArchiveNames(parsed, best.parsed) > 0) best = { name, parsed };
  }
  return best?.name;
}

function compareArchiveNames(a: ArchiveName, b: ArchiveName): number {
  if (a.step !== b.step) return a.step - b.step;
  if ((a.id === undefined) !== (b.id === undefined)) return a.id === undefined ? -1 : 1;
  if (a.id !== undefined && b.id !== undefined && a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}

/** The highest step among archive file names' summaries (`undefined`: none). */
export function highestSummaryStep(names: Iterable<string>): number | undefined {
  let highest: number | undefined;
  for (const name of names) {
    const parsed = parseArchiveName(name);
    if (parsed?.kind === 'summary' && (highest === undefined || parsed.step > highest)) highest = parsed.step;
  }
  return highest;
}
