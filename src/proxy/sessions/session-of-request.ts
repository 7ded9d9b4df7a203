/**
 * Which session a proxied request belongs to: the `x-compaction-session` header when the
 * client sends one; else the fingerprint of the conversation's opening, so a stateless client
 * that resends its whole history every turn (every SDK, Claude Code, Codex) lands in the same
 * session on every call, on every proxy instance and after a restart.
 */
import { createHash } from 'node:crypto';
import { CompactError } from '../../core/errors.js';
import type { MessageFormat } from '../../core/messages/message.js';
import { runSteps, runStepsYielding, SLICE_MS, type Steps } from '../../core/time-slice.js';

/** The request header naming the session. */
export const SESSION_HEADER = 'x-compaction-session';
/** The prefix of session ids found from a history. */
export const FINGERPRINT_PREFIX = 'fp-';
/** The longest session id the header may carry. */
export const MAX_SESSION_ID_LENGTH = 200;

const OPENING_ROLES = new Set(['user', 'system', 'developer']);

/** Roles of the system prompt when it travels among the messages (Chat Completions, Responses). */
const SYSTEM_ROLES = new Set(['system', 'developer']);

const roleOf = (message: unknown) => String((message as Record<string, unknown> | null)?.role);

/**
 * Whether `message` belongs to the conversation's opening: every message before the model's
 * first reply (the first assistant message or tool item). It is what the first request of a
 * conversation holds, and every later request resends it unchanged, so its fingerprint names
 * the session from the first call on.
 */
function opens(message: unknown): boolean {
  const type = (message as Record<string, unknown> | null)?.type;
  if (type !== undefined && type !== 'message') return false; // a Responses tool item or reasoning
  return OPENING_ROLES.has(roleOf(message));
}

/** Messages looked at between two steps of {@link fingerprintSteps} when each is a test of its role. */
const ROLES_PER_STEP = 1024;
/** Characters of the opening's JSON handed to the hash at once. */
const HASH_PIECE_CHARS = 64 * 1024;

/**
 * The index of the first message after the opening (`messages.length` when all are opening).
 * The fingerprint depends on that many messages and one more (its span): a history that
 * repeats them has the same fingerprint; infinite while every message opens (the next may too).
 */
function* openingEndSteps(messages: readonly unknown[]): Steps<number> {
  for (let i = 0; i < messages.length; i++) {
    if (!opens(messages[i])) return i;
    if (i % ROLES_PER_STEP === ROLES_PER_STEP - 1) yield;
  }
  return messages.length;
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
  return runSteps(fingerprintSteps(format, messages)).id;
}

/**
 * {@link fingerprintSession} and {@link fingerprintSpan} across turns of the event loop (an
 * opening of 100k tiny messages took 55 ms at once).
 */
export function fingerprintInSlices(
  format: MessageFormat,
  messages: readonly unknown[],
  signal?: AbortSignal,
): Promise<{ id: string; span: number }> {
  return runStepsYielding(fingerprintSteps(format, messages), SLICE_MS, signal);
}

/**
 * The conversation's opening (every message before the model's first reply: the first
 * assistant message or tool item; the first message when there is none), its system and
 * developer messages left out unless it holds nothing else, hashed as the JSON of that array
 * would be: the hash reads `[`, each message's JSON (`null` for one JSON leaves out), commas,
 * `]`, so the id is the one of a single `JSON.stringify` of the array (for plain JSON values,
 * as a parsed body holds). The system prompt is left out because clients such as Claude Code
 * rebuild it (a date, a directory listing) every call. A step per message; with the span.
 */
function* fingerprintSteps(
  format: MessageFormat,
  messages: readonly unknown[],
): Steps<{ id: string; span: number }> {
  const end = yield* openingEndSteps(messages);
  const opening = end > 0 ? end : Math.min(1, messages.length);
  let words = 0;
  for (let i = 0; i < opening; i++) {
    if (!SYSTEM_ROLES.has(roleOf(messages[i]))) words++;
    if (i % ROLES_PER_STEP === ROLES_PER_STEP - 1) yield;
  }
  const hash = createHash('sha256').update(`${format}\u0000`);
  let piece = '[';
  let first = true;
  for (let i = 0; i < opening; i++) {
    const message = messages[i];
    if (words > 0 && SYSTEM_ROLES.has(roleOf(message))) continue;
    piece += `${first ? '' : ','}${JSON.stringify(message, withoutCacheMarks) ?? 'null'}`;
    first = false;
    if (piece.length >= HASH_PIECE_CHARS) {
      hash.update(piece);
      piece = '';
    }
    yield;
  }
  const digest = hash.update(`${piece}]`).digest('hex');
  const span = end === messages.length ? Number.POSITIVE_INFINITY : end + 1;
  return { id: `${FINGERPRINT_PREFIX}${digest.slice(0, 32)}`, span };
}

/** Whether two messages are the same for a session's identity: cache marks aside, system prompts alike. */
export function sameMessage(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (SYSTEM_ROLES.has(roleOf(a)) && SYSTEM_ROLES.has(roleOf(b))) return true;
  return JSON.stringify(a, withoutCacheMarks) === JSON.stringify(b, withoutCacheMarks);
}

/**
 * The session of a conversation that parts from the one known under its fingerprint: `fp-` and
 * 32 hex digits of a SHA-256 over the format and its first `count` messages (up to and with the
 * first that differs; system messages and cache marks left out), so that every call of it, on
 * any instance that knew the other, finds the same id. A step per message.
 */
export function forkSessionInSlices(
  format: MessageFormat,
  messages: readonly unknown[],
  count: number,
  signal?: AbortSignal,
): Promise<string> {
  return runStepsYielding(forkSteps(format, messages, count), SLICE_MS, signal);
}

function* forkSteps(format: MessageFormat, messages: readonly unknown[], count: number): Steps<string> {
  const hash = createHash('sha256').update(`${format}\u0000fork\u0000`);
  for (let i = 0; i < Math.min(count, messages.length); i++) {
    const message = messages[i];
    if (!SYSTEM_ROLES.has(roleOf(message)))
      hash.update(`${JSON.stringify(message, withoutCacheMarks) ?? 'null'}\u0000`);
    yield;
  }
  return `${FINGERPRINT_PREFIX}${hash.digest('hex').slice(0, 32)}`;
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
