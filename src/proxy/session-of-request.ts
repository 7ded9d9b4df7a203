/**
 * Which session a proxied request belongs to: the `x-compaction-session` header when the
 * client sends one; else the fingerprint of the conversation's opening, so a stateless client
 * that resends its whole history every turn (every SDK, Claude Code, Codex) lands in the same
 * session on every call, on every proxy instance and after a restart.
 */
import { createHash } from 'node:crypto';
import { CompactError } from '../core/errors.js';
import type { MessageFormat } from '../core/messages/message.js';

/** The request header naming the session. */
export const SESSION_HEADER = 'x-compaction-session';
/** The prefix of session ids found from a history. */
export const FINGERPRINT_PREFIX = 'fp-';
/** The longest session id the header may carry. */
export const MAX_SESSION_ID_LENGTH = 200;

const OPENING_ROLES = new Set(['user', 'system', 'developer']);

/** Roles of the system prompt when it travels among the messages (Chat Completions, Responses). */
const SYSTEM_ROLES = new Set(['system', 'developer']);

/**
 * The conversation's opening: every message before the model's first reply (the first
 * assistant message or tool item). It is what the first request of a conversation holds, and
 * every later request resends it unchanged, so its fingerprint names the session from the
 * first call on. The system prompt is left out, a field of its own or system and developer
 * messages: clients such as Claude Code rebuild it (a date, a directory listing) every call.
 */
function openingOf(messages: readonly unknown[]): unknown[] {
  const end = openingEnd(messages);
  const opening = end > 0 ? messages.slice(0, end) : messages.slice(0, 1);
  const words = opening.filter(
    (message) => !SYSTEM_ROLES.has(String((message as Record<string, unknown> | null)?.role)),
  );
  return words.length > 0 ? words : opening;
}

/** The index of the first message after the opening (`messages.length` when all are opening). */
function openingEnd(messages: readonly unknown[]): number {
  for (let i = 0; i < messages.length; i++) {
    const record = messages[i] as Record<string, unknown> | null;
    const type = record?.type;
    if (type !== undefined && type !== 'message') return i; // a Responses tool item or reasoning
    if (!OPENING_ROLES.has(String(record?.role))) return i;
  }
  return messages.length;
}

/**
 * How many leading messages the fingerprint of `messages` depends on: a history that repeats
 * that many has the same fingerprint. Infinite while every message belongs to the opening (the
 * next one may too).
 */
export function fingerprintSpan(messages: readonly unknown[]): number {
  const end = openingEnd(messages);
  return end === messages.length ? Number.POSITIVE_INFINITY : end + 1;
}

/** `cache_control` marks move from message to message between calls: they are not content. */
function withoutCacheMarks(key: string, value: unknown): unknown {
  return key === 'cache_control' ? undefined : value;
}

/**
 * The session id of a history without a header: `fp-` and 32 hex digits of a SHA-256 over the
 * format and the conversation's opening (`cache_control` marks ignored). Two conversations
 * that open with the very same messages share the id; the state's anchor (which holds only for
 * the history it was made from) keeps each one's summary to itself.
 */
export function fingerprintSession(format: MessageFormat, messages: readonly unknown[]): string {
  const opening = JSON.stringify(openingOf(messages), withoutCacheMarks);
  const digest = createHash('sha256').update(`${format}\u0000`).update(opening).digest('hex');
  return `${FINGERPRINT_PREFIX}${digest.slice(0, 32)}`;
}

/** The session named by the header, checked; `undefined` without the header. */
export function headerSession(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const id = value.trim();
  // Control characters (C1 too: a header's bytes are read as latin1) would reach log lines.
  if (id === '' || id.length > MAX_SESSION_ID_LENGTH || /[\u0000-\u001f\u007f-\u009f]/.test(id)) {
    throw new CompactError(
      'invalid_config',
      `${SESSION_HEADER} must be 1 to ${MAX_SESSION_ID_LENGTH} printable characters`,
      { issues: [{ path: [SESSION_HEADER], message: 'invalid session id' }] },
    );
  }
  return id;
}
