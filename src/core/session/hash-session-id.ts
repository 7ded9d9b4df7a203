import { createHash, createHmac } from 'node:crypto';

/** The environment variable that holds the key of {@link hashSessionId} when none is passed. */
export const SESSION_HASH_KEY_ENV = 'COMPACT_SESSION_HASH_KEY';

/** Separates the unkeyed hash from any other SHA-256 of the id (the archive folder suffix). */
const UNKEYED_DOMAIN = 'agent-compaction/session-id\u0000';

let warnedUnkeyed = false;

function warnUnkeyed(): void {
  if (warnedUnkeyed) return;
  warnedUnkeyed = true;
  process.emitWarning(
    `hashSessionIds is on without a key: session ids are hashed without a secret, so a guessable id ` +
      `can be found by trying candidates. Set ${SESSION_HASH_KEY_ENV} (or pass hashKey) to a random secret.`,
    { code: 'COMPACT_UNKEYED_SESSION_HASH' },
  );
}

/**
 * A stable, opaque stand-in for a session id: `sid-` + 32 hex digits (128 bits) of an
 * HMAC-SHA256 of the id under `key` (default: the `COMPACT_SESSION_HASH_KEY` environment
 * variable). The same id and key always give the same value, so traces of one session still
 * group together, and without the key a guessable id (a user id, an e-mail) cannot be found
 * by trying candidates. Without any key it falls back to a plain SHA-256 of the id (prints a
 * process warning once): stable, but reversible for guessable ids. Only `[0-9a-z-]`, so the
 * value is also a safe folder name.
 *
 * @example
 * ```ts
 * hashSessionId('user-42/chat-7', process.env.SESSION_HASH_KEY); // 'sid-' + 32 hex digits
 * ```
 */
export function hashSessionId(sessionId: string, key?: string | Uint8Array): string {
  const secret = key ?? process.env[SESSION_HASH_KEY_ENV];
  if (secret === undefined || secret.length === 0) {
    warnUnkeyed();
    return `sid-${createHash('sha256').update(UNKEYED_DOMAIN).update(sessionId, 'utf8').digest('hex').slice(0, 32)}`;
  }
  return `sid-${createHmac('sha256', secret).update(sessionId, 'utf8').digest('hex').slice(0, 32)}`;
}
