/**
 * Step 1: index the request. Every message is parsed once and given a stable id; tool
 * results are paired with their calls by position ({@link ToolPairer}). Per session, the
 * indexed history of the previous call is kept, and a call costs the real work only for the
 * new messages plus a bounded sample of the old ones, whatever the history's length: the
 * newest messages, a few spread over the whole history (a dropped or inserted message moves
 * them all), and a rotating audit slice, so that every old message is checked again within a
 * bounded number of calls. A message object the caller rebuilt (SDKs and JSON round trips
 * rebuild every object per call) is compared by content where it is sampled and adopted when
 * equal, so the next call finds it by identity. Anything found changed falls back to a full
 * scan from the start, which rolls back to the first changed message.
 */

import { ChunkedList } from '../../chunked-list.js';
import { IntColumn } from '../../int-column.js';
import { flatString } from '../../messages/flat-string.js';
import type { MessageCodec } from '../../messages/formats/message-codec.js';
import { hashLanes, hashString, lanesString } from '../../messages/hash-string.js';
import type { MessageFormat } from '../../messages/message.js';
import type { IndexedEntry, IndexedMessage, MessageIndex } from '../../messages/message-index.js';
import { ToolPairer } from '../../messages/tool-pairing.js';
import { ShardedMap } from '../../sharded-map.js';
import type { SessionView } from '../view/session-view.js';
import { showsAssistant } from './request-shows-assistant.js';
import { sameShape, sameWire, unchangedInPlace, wireFingerprint } from './same-wire.js';

/** The newest messages checked on every call (compared by content when rebuilt). */
const RECHECK_NEWEST = 8;
/** The newest messages looked at on every call (by shape when rebuilt, see {@link sameShape}). */
const RECHECK_RECENT = 32;
/** Messages spread evenly over the older history, looked at on every call. */
const PROBES = 8;
/**
 * The rotating audit's work per call: an old message found by identity costs 1 (its content
 * field and `meta` compared), a rebuilt one {@link DEEP_COST} (compared by content and
 * adopted). A history of n messages is audited whole within n / 768 calls, n / 12 when every
 * object is rebuilt per call. Each look at an old message is a cache miss on a long history,
 * and a rebuilt object is slower still to touch (about 1-2 us when freshly allocated), so the
 * sample is what a warm call costs.
 */
const AUDIT_PER_CALL = 768;
const DEEP_COST = 64;
/** Rebuilt messages looked at by shape per call, in a second rotation (n / 32 calls). */
const SHAPE_AUDIT_PER_CALL = 32;
/**
 * From this length, the rotating audits run in a turn of the event loop after the call (while
 * the agent waits on its model) on the array the call was given, and a call given that same
 * array again skips them: on a long history their cache misses were most of a warm call.
 */
const AUDIT_AFTER_FROM = 4_096;

/**
 * Approximate bytes one indexed message keeps alive in a session's cache: its parse and its
 * wire copy (UTF-16 text, twice) and the bookkeeping around them.
 */
export function entryBytes(entry: IndexedEntry): number {
  const parsed = entry.parsed;
  let chars = parsed.text.length;
  for (const call of parsed.toolCalls) chars += call.name.length + call.arguments.length;
  for (const result of parsed.toolResults) chars += result.output.length;
  return 432 + 4 * chars;
}

/** A message's stable id before the `#n` of a repeat: its own id, or its content hash. */
const baseId = (entry: IndexedEntry) =>
  entry.parsed.explicitId ?? lanesString(entry.hashHigh, entry.hashLow, 'h:');

/** The next link of a prefix chain: the previous link, the message's stable id and its content hash. */
export function chainLink(previous: string, id: string, hash: string): string {
  return hashString(`${previous}\u0000${id}\u0000${hash}`);
}

/** The indexed history of one session, kept between calls. */
export class IndexedHistory {
  /**
   * The message objects of the last calls, by position: the object indexed, or a rebuilt
   * object with the same content adopted since. This and the two columns below are chunked:
   * three more arrays of 300k pushed in step with {@link items} grew at the same message, and
   * their copies held the loop 25-60 ms in one push (issue 47).
   */
  readonly raws = new ChunkedList<unknown>();
  /**
   * Indexed messages, by position; chunked too (one array of 300k grew by a copy of itself in
   * one push, 13-21 ms: issue 47). Read through `at()` or iteration.
   */
  readonly items = new ChunkedList<IndexedMessage>();
  /** Positional pairing of the whole history. */
  pairer = new ToolPairer();
  /** The format the history was indexed in. */
  format: MessageFormat | undefined;
  /** Bumped whenever earlier messages change (an edit, a truncation, another format). */
  generation = 0;
  /** The first position the last {@link update} found changed. */
  changedFrom = 0;
  /** The session's view of this history, kept for the next call (see resume-view.ts). */
  view: SessionView | undefined;
  /**
   * The history's prefix chain: link `i` ({@link chainAt}) hashes the stable id and content
   * hash of every message up to position `i`, so that "the first n messages are the ones a
   * state was made from" is one comparison (see match-state.ts). Extended for new messages
   * only. Kept as the two 32-bit lanes of each link, not a string per message: a string each
   * was one more object for every scavenge of a cold index to copy (issue 47); in chunks (a
   * typed array grown by doubling doubled at the same message as the pairer's columns).
   */
  readonly #chain = new IntColumn();
  /** The newest link as a string (the text the next link hashes). */
  #lastLink = '';
  /** The content field and `meta` of each object in {@link raws} when it was indexed or adopted. */
  readonly #fingerprints = new ChunkedList<unknown>();
  readonly #metas = new ChunkedList<unknown>();
  /** Approximate bytes of the indexed messages (see {@link entryBytes}). */
  bytes = 0;
  /** The messages that show an assistant ({@link showsAssistant}). */
  assistantShown = 0;
  /** Where the next audits of older messages start (by content, by shape). */
  #audit = 0;
  #shapeAudit = 0;
  /** Repeats of each base id so far (sharded: a `Map` of 300k ids grew in one ~15 ms `set`). */
  readonly #seen = new ShardedMap<number>();
  /** The array of the last call, audited after it (held weakly: it is the caller's). */
  #audited: WeakRef<readonly unknown[]> | undefined;
  /** Whether the audit after the last call ran, and whether it found a change. */
  #auditedAfter = false;
  #suspect = false;
  #auditPending = false;

  /** The number of messages indexed. */
  get length(): number {
    return this.items.length;
  }

  /**
   * Brings the index up to date with `history` (its first `length` messages: a prefix indexed
   * without copying it). Returns the first position that changed (`this.length` before the
   * call when the history only grew).
   */
  update(
    history: readonly unknown[],
    codec: MessageCodec,
    index: MessageIndex,
    length = history.length,
  ): number {
    let same = 0;
    if (this.format === codec.format) {
      const limit = Math.min(length, this.raws.length);
      const audited = this.#auditedAfter && this.#audited?.deref() === history;
      same =
        !(audited && this.#suspect) && this.#sampleHolds(history, limit, !audited)
          ? limit
          : this.#scan(history, limit);
    }
    this.#auditedAfter = false;
    this.#suspect = false;
    if (same < this.raws.length) this.#rollback(same);
    this.format = codec.format;
    for (let i = same; i < length; i++) {
      const raw = history[i];
      const entry = index.entry(raw, i, codec);
      const base = baseId(entry);
      const n = this.#seen.get(base) ?? 0;
      this.#seen.set(base, n + 1);
      this.bytes += entryBytes(entry);
      this.raws.push(raw);
      this.#fingerprints.push(wireFingerprint(raw));
      this.#metas.push((raw as Record<string, unknown>).meta);
      const id = n === 0 ? base : flatString(base, '#', String(n));
      this.items.push({ entry, id, index: i });
      this.#pushLink(i, id, entry.hash);
      this.pairer.add(entry.parsed, i);
      if (showsAssistant(entry.parsed)) this.assistantShown++;
    }
    this.changedFrom = same;
    if (length >= AUDIT_AFTER_FROM) this.#auditAfter(history);
    return same;
  }

  /** Link `i` of the prefix chain (as {@link chainLink} gives it). */
  chainAt(i: number): string {
    if (i < 0 || i >= this.items.length) return '';
    return lanesString(this.#chain.get(2 * i) >>> 0, this.#chain.get(2 * i + 1) >>> 0);
  }

  /** Extends the chain with message `i`. */
  #pushLink(i: number, id: string, hash: string): void {
    const link = hashLanes(`${this.#lastLink}\u0000${id}\u0000${hash}`);
    this.#chain.set(2 * i, link[0]! | 0);
    this.#chain.set(2 * i + 1, link[1]! | 0);
    this.#lastLink = lanesString(link[0]!, link[1]!);
  }

  /** Runs the next audit slices on `history` in a later turn of the loop. */
  #auditAfter(history: readonly unknown[]): void {
    this.#audited = new WeakRef(history);
    if (this.#auditPending) return;
    this.#auditPending = true;
    const timer = setImmediate(() => {
      this.#auditPending = false;
      const audited = this.#audited?.deref();
      if (audited === undefined) return;
      const limit = Math.min(audited.length, this.raws.length);
      const newest = Math.max(0, limit - RECHECK_NEWEST);
      this.#suspect = !this.#auditHolds(audited, newest, Math.max(0, limit - RECHECK_RECENT));
      this.#auditedAfter = true;
    });
    timer.unref?.();
  }

  /**
   * True when position `i` of `history` still holds what was indexed there: the same object
   * not edited in place, or a rebuilt object with the same content (then adopted).
   */
  #holds(history: readonly unknown[], i: number): boolean {
    const raw = history[i];
    const previous = this.raws.at(i);
    if (raw === previous) return unchangedInPlace(raw, this.#fingerprints.at(i), this.#metas.at(i));
    if (raw === null || typeof raw !== 'object') return false;
    if (!unchangedInPlace(previous, this.#fingerprints.at(i), this.#metas.at(i)) || !sameWire(raw, previous))
      return false;
    this.raws.set(i, raw);
    this.#fingerprints.set(i, wireFingerprint(raw));
    this.#metas.set(i, (raw as Record<string, unknown>).meta);
    return true;
  }

  /**
   * True when position `i` of `history` looks unchanged: the same object not edited in
   * place, or a rebuilt object of the same shape (not adopted: only a comparison by content
   * adopts).
   */
  #resembles(history: readonly unknown[], i: number): boolean {
    const raw = history[i];
    const previous = this.raws.at(i);
    if (raw === previous) return unchangedInPlace(raw, this.#fingerprints.at(i), this.#metas.at(i));
    return sameShape(raw, previous);
  }

  /**
   * Checks the sample of this call: the newest messages, probes spread over the older ones,
   * and the next slices of the rotating audits. False at the first position found changed.
   */
  #sampleHolds(history: readonly unknown[], limit: number, audit: boolean): boolean {
    const newest = Math.max(0, limit - RECHECK_NEWEST);
    for (let i = limit - 1; i >= newest; i--) if (!this.#holds(history, i)) return false;
    const recent = Math.max(0, limit - RECHECK_RECENT);
    for (let i = newest - 1; i >= recent; i--) if (!this.#resembles(history, i)) return false;
    const step = Math.max(1, Math.ceil(recent / PROBES));
    for (let i = 0; i < recent; i += step) if (!this.#resembles(history, i)) return false;
    return !audit || this.#auditHolds(history, newest, recent);
  }

  /** The next slices of the rotating audits (before `newest` by content, `recent` by shape). */
  #auditHolds(history: readonly unknown[], newest: number, recent: number): boolean {
    // The audit by content covers everything older than the newest: the recent ones were only
    // looked at by shape.
    let i = this.#audit < newest ? this.#audit : 0;
    for (let budget = AUDIT_PER_CALL; budget > 0 && i < newest; i++) {
      budget -= history[i] === this.raws.at(i) ? 1 : DEEP_COST;
      if (!this.#holds(history, i)) return false;
    }
    let j = this.#shapeAudit < recent ? this.#shapeAudit : 0;
    for (const end = Math.min(recent, j + SHAPE_AUDIT_PER_CALL); j < end; j++)
      if (history[j] !== this.raws.at(j) && !sameShape(history[j], this.raws.at(j))) return false;
    this.#audit = i >= newest ? 0 : i;
    this.#shapeAudit = j >= recent ? 0 : j;
    return true;
  }

  /** The first position of `history` (below `limit`) that changed, checking every one. */
  #scan(history: readonly unknown[], limit: number): number {
    let same = 0;
    while (same < limit && this.#holds(history, same)) same++;
    return same;
  }

  #rollback(keep: number): void {
    this.generation++;
    // A message's base id and bytes are read again from its entry (arrays of them, kept for
    // every message, were copied by the scavenges of a cold index: issue 47).
    for (let i = this.items.length - 1; i >= keep; i--) {
      const entry = this.items.at(i)!.entry;
      const base = baseId(entry);
      const n = this.#seen.get(base)! - 1;
      if (n === 0) this.#seen.delete(base);
      else this.#seen.set(base, n);
      this.bytes -= entryBytes(entry);
      if (showsAssistant(entry.parsed)) this.assistantShown--;
    }
    this.items.truncate(keep);
    this.#lastLink = this.chainAt(keep - 1);
    this.raws.truncate(keep);
    this.#fingerprints.truncate(keep);
    this.#metas.truncate(keep);
    this.pairer = new ToolPairer();
    for (let i = 0; i < keep; i++) this.pairer.add(this.items.at(i)!.entry.parsed, i);
  }
}

/**
 * Per-session indexed histories, capped by the total number of messages they hold and by
 * their approximate bytes (not by sessions): the least recently used sessions are dropped
 * first, and `onEvict` hears of each.
 */
export class IndexedHistories {
  readonly #sessions = new Map<string, IndexedHistory>();
  readonly #maxMessages: number;
  readonly #maxBytes: number;
  readonly #onEvict: ((sessionId: string, history: IndexedHistory) => void) | undefined;
  #total = 0;
  #bytes = 0;

  constructor(
    maxMessages = 200_000,
    maxBytes = Number.POSITIVE_INFINITY,
    onEvict?: (sessionId: string, history: IndexedHistory) => void,
  ) {
    this.#maxMessages = maxMessages;
    this.#maxBytes = maxBytes;
    this.#onEvict = onEvict;
  }

  /** Sessions held. */
  get size(): number {
    return this.#sessions.size;
  }

  /** Approximate bytes held (see {@link entryBytes}). */
  get bytes(): number {
    return this.#bytes;
  }

  /** The session's indexed history (moved to most recently used). */
  get(sessionId: string): IndexedHistory {
    let history = this.#sessions.get(sessionId);
    if (history) this.#sessions.delete(sessionId);
    else history = new IndexedHistory();
    this.#sessions.set(sessionId, history);
    return history;
  }

  /**
   * Updates the session's index with `history` (see {@link IndexedHistory.update}), then
   * drops least recently used sessions while the totals exceed the caps.
   */
  update(
    sessionId: string,
    history: readonly unknown[],
    codec: MessageCodec,
    index: MessageIndex,
    length = history.length,
  ): { indexed: IndexedHistory; changedFrom: number } {
    const indexed = this.get(sessionId);
    const before = indexed.length;
    const bytesBefore = indexed.bytes;
    const changedFrom = indexed.update(history, codec, index, length);
    this.#total += indexed.length - before;
    this.#bytes += indexed.bytes - bytesBefore;
    if (this.#total > this.#maxMessages || this.#bytes > this.#maxBytes) {
      for (const [id, other] of this.#sessions) {
        if (this.#total <= this.#maxMessages && this.#bytes <= this.#maxBytes) break;
        if (id === sessionId) continue;
        this.#total -= other.length;
        this.#bytes -= other.bytes;
        this.#sessions.delete(id);
        this.#onEvict?.(id, other);
      }
    }
    return { indexed, changedFrom };
  }

  /** The messages held for a session (0 when none), without moving it. */
  heldLength(sessionId: string): number {
    return this.#sessions.get(sessionId)?.length ?? 0;
  }

  /** Whether the session is held (without moving it). */
  has(sessionId: string): boolean {
    return this.#sessions.has(sessionId);
  }

  /** Forgets one session. */
  delete(sessionId: string): void {
    const history = this.#sessions.get(sessionId);
    if (history) {
      this.#total -= history.length;
      this.#bytes -= history.bytes;
    }
    this.#sessions.delete(sessionId);
  }

  /** Forgets every session. */
  clear(): void {
    this.#sessions.clear();
    this.#total = 0;
    this.#bytes = 0;
  }
}
