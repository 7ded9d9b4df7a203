import { createHash } from 'node:crypto';
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

/** The archive's file names, shared by every adapter. */
export const ARCHIVE_NAMES = Object.freeze({
  transcript: (step: number) => `transcript-pre-compact-${padStep(step)}.jsonl`,
  summary: (step: number) => `summary-${padStep(step)}.json`,
  events: 'events.jsonl',
});
