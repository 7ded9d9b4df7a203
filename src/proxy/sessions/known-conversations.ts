/**
 * The conversations a proxy instance has seen under each fingerprint, so that conversations
 * that open alike (a canned first message) are told apart when they run side by side. The
 * fingerprint of the opening names one session for all of them, and the session's state
 * follows whichever called last (the core resumes up to 4 earlier branches): six such loops
 * alternating summarized 30 times in 150 calls, against 6 one after the other
 * (test/proxy/proxy-shared-opening.test.ts).
 *
 * Each fingerprint keeps its conversations' last histories, newest first. A request that
 * continues one (repeats all its messages, cache marks aside) is in its session; one that
 * resends an earlier turn of one too. One that continues none is taken as an edit of the
 * conversation it shares the most messages with (a rewind, an edited turn: its session, whose
 * state the core resumes where it still holds) and becomes a history of its own in that
 * session. Only when an older history of a session is continued after a newer one (two
 * conversations alternating, not an abandoned edit) does the older get a session of its own,
 * named by its messages up to where it parts from the newer ({@link forkSessionInSlices}): the
 * same id on any instance that saw the same two. So one conversation is never split as it
 * grows, is compacted (the client resends its own history, which the proxy keeps reading), is
 * retried or edited; alternating ones each pay one compaction to part, then keep their own.
 */
import type { MessageFormat } from '../../core/messages/message.js';
import { DEFAULT_REUSE_BYTES } from '../bodies/parsed-bodies.js';
import { forkSessionInSlices, sameMessage } from './session-of-request.js';

/** Histories kept per fingerprint (the least recently seen forgotten first). */
const HISTORIES_PER_FINGERPRINT = 8;
/** Fingerprints remembered (the least recently seen forgotten first): 256 histories at most. */
const REMEMBERED_FINGERPRINTS = 32;
/**
 * The newest messages of a history compared to tell whether a request repeats it: two
 * conversations that parted differ there; a request that continues one repeats them (most as
 * the very same objects, read from the body it extends). Comparing every message cost a
 * stringify of each when the body was parsed whole (a 100k-message one every call). A wrong
 * guess costs a compaction, never a leak: a state holds only for the history it was made from.
 */
const COMPARED_MESSAGES = 4;

interface Known {
  session: string;
  messages: readonly unknown[];
  /** The size of the body the messages were parsed from (what holding them costs, roughly). */
  bytes: number;
}

/** How many messages `a` and `b` share from the first on. */
function shared(a: readonly unknown[], b: readonly unknown[]): number {
  const end = Math.min(a.length, b.length);
  let i = 0;
  while (i < end && sameMessage(a[i], b[i])) i++;
  return i;
}

/** Whether `messages` repeats the first `count` messages of `known` (their newest {@link COMPARED_MESSAGES}). */
function repeats(known: readonly unknown[], messages: readonly unknown[], count: number): boolean {
  if (count > messages.length || count > known.length) return false;
  for (let i = count - 1; i >= Math.max(0, count - COMPARED_MESSAGES); i--)
    if (!sameMessage(known[i], messages[i])) return false;
  return true;
}

/** The conversations seen under each fingerprint (see the file's comment). */
export class KnownConversations {
  readonly #byFingerprint = new Map<string, Known[]>();
  readonly #maxBytes: number;

  /**
   * `maxBytes`: the bodies whose messages are held, in all (the proxy's `reuseBytes`): past it
   * the least recently seen are forgotten (their conversations then share the fingerprint's
   * session again, as before they were told apart), so 256 histories of large bodies do not
   * hold gigabytes.
   */
  constructor(maxBytes = DEFAULT_REUSE_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /**
   * The session of `messages`, whose opening's fingerprint is `fingerprint`, parsed from a body
   * of `bytes`; notes it.
   */
  async sessionOf(
    format: MessageFormat,
    fingerprint: string,
    messages: readonly unknown[],
    signal?: AbortSignal,
    bytes = 0,
  ): Promise<string> {
    try {
      return await this.#sessionOf(format, fingerprint, messages, signal, bytes);
    } finally {
      this.#trim();
    }
  }

  /** Forgets the least recently seen histories until the bodies held fit `maxBytes`. */
  #trim(): void {
    let held = 0;
    for (const known of this.#byFingerprint.values()) for (const entry of known) held += entry.bytes;
    for (const [fingerprint, known] of this.#byFingerprint) {
      if (held <= this.#maxBytes) return;
      while (known.length > 0 && held > this.#maxBytes) held -= known.pop()!.bytes;
      if (known.length === 0) this.#byFingerprint.delete(fingerprint);
    }
  }

  async #sessionOf(
    format: MessageFormat,
    fingerprint: string,
    messages: readonly unknown[],
    signal: AbortSignal | undefined,
    bytes: number,
  ): Promise<string> {
    const known = this.#byFingerprint.get(fingerprint) ?? [];
    this.#byFingerprint.delete(fingerprint);
    this.#byFingerprint.set(fingerprint, known);
    if (this.#byFingerprint.size > REMEMBERED_FINGERPRINTS)
      this.#byFingerprint.delete(this.#byFingerprint.keys().next().value as string);
    for (let at = 0; at < known.length; at++) {
      const history = known[at]!.messages;
      if (repeats(history, messages, history.length))
        return await this.#continued(format, known, at, messages, signal, bytes);
      // An earlier turn of it (a retry, a rewind): its session, the history left as it is.
      if (repeats(history, messages, messages.length)) return known[at]!.session;
    }
    // An edit of the history it shares the most with, or a new conversation.
    let best: { at: number; count: number } | undefined;
    for (let at = 0; at < known.length; at++) {
      const count = shared(known[at]!.messages, messages);
      if (count > (best?.count ?? -1)) best = { at, count };
    }
    const session = best === undefined ? fingerprint : known[best.at]!.session;
    known.unshift({ session, messages, bytes });
    if (known.length > HISTORIES_PER_FINGERPRINT) known.pop();
    return session;
  }

  /** `known[at]` continued by `messages`: its session, or one of its own when a newer history holds that one. */
  async #continued(
    format: MessageFormat,
    known: Known[],
    at: number,
    messages: readonly unknown[],
    signal: AbortSignal | undefined,
    bytes: number,
  ): Promise<string> {
    const entry = known[at]!;
    const newer = known.slice(0, at).find((other) => other.session === entry.session);
    if (newer !== undefined) {
      const parted = shared(newer.messages, messages);
      entry.session = await forkSessionInSlices(format, messages, parted + 1, signal);
    }
    entry.messages = messages;
    entry.bytes = bytes;
    // Found again: the list may have changed while the id was hashed.
    const index = known.indexOf(entry);
    if (index >= 0) known.splice(index, 1);
    known.unshift(entry);
    return entry.session;
  }
}
