/**
 * Step 1: index the request. Every message is parsed once and given a stable id; tool
 * results are paired with their calls by position ({@link ToolPairer}). Per session, the
 * indexed history of the previous call is kept: a history that grew by appending (the
 * common case) costs one reference comparison per old message (a structural comparison when
 * the caller rebuilds its message objects per call) and the real work only for the new ones; an edit or truncation rolls back to the first changed message.
 */
import type { MessageCodec } from '../messages/formats/message-codec.js';
import type { MessageFormat } from '../messages/message.js';
import {
  type IndexedEntry,
  type IndexedMessage,
  isCurrentEntry,
  type MessageIndex,
} from '../messages/message-index.js';
import { ToolPairer } from '../messages/tool-pairing.js';
import { sameWire } from './same-wire.js';
import type { SessionView } from './session-view.js';

/** The newest messages checked for in-place edits on every call. */
const RECHECK_RECENT = 64;
/** Older messages checked per call, in rotation. */
const AUDIT_PER_CALL = 1_024;

/**
 * Approximate bytes one indexed message keeps alive in a session's cache: its parse and its
 * wire copy (UTF-16 text, twice) and the bookkeeping around them.
 */
export function entryBytes(entry: IndexedEntry): number {
  const parsed = entry.parsed;
  let chars = parsed.text.length;
  for (const call of parsed.toolCalls) chars += call.name.length + call.arguments.length;
  for (const result of parsed.toolResults) chars += result.output.length;
  return 400 + 4 * chars;
}

/** The indexed history of one session, kept between calls. */
export class IndexedHistory {
  /** The message objects of the last call, by position. */
  readonly raws: unknown[] = [];
  /** Indexed messages, by position. */
  readonly items: IndexedMessage[] = [];
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
  readonly #bases: string[] = [];
  readonly #sizes: number[] = [];
  /** Approximate bytes of the indexed messages (see {@link entryBytes}). */
  bytes = 0;
  /** Where the next audit of older messages for in-place edits starts. */
  #audit = 0;
  readonly #seen = new Map<string, number>();

  /** The number of messages indexed. */
  get length(): number {
    return this.items.length;
  }

  /**
   * Brings the index up to date with `history`. Returns the first position that changed
   * (`this.length` before the call when the history only grew).
   */
  update(history: readonly unknown[], codec: MessageCodec, index: MessageIndex): number {
    let same = 0;
    if (this.format === codec.format) {
      const limit = Math.min(history.length, this.raws.length);
      const items = this.items;
      // Identity first (a tight loop); objects rebuilt per call (as SDKs do) are compared by
      // content. In-place edits are looked for in the newest messages on every call and in a
      // rotating slice of the older ones (a full pass every few calls on long histories).
      const recent = Math.max(0, limit - RECHECK_RECENT);
      const auditFrom = this.#audit < recent ? this.#audit : 0;
      const auditTo = Math.min(recent, auditFrom + AUDIT_PER_CALL);
      this.#audit = auditTo >= recent ? 0 : auditTo;
      while (same < limit) {
        const raw = history[same];
        const previous = this.raws[same];
        if (raw !== previous) {
          if (!isCurrentEntry(items[same]!.entry, previous) || !sameWire(raw, previous)) break;
        } else if (
          (same >= recent || (same >= auditFrom && same < auditTo)) &&
          !isCurrentEntry(items[same]!.entry, raw)
        )
          break;
        same++;
      }
    }
    if (same < this.raws.length) this.#rollback(same);
    this.format = codec.format;
    for (let i = same; i < history.length; i++) {
      const raw = history[i];
      const entry = index.entry(raw, i, codec);
      const base = entry.parsed.explicitId ?? `h:${entry.hash}`;
      const n = this.#seen.get(base) ?? 0;
      this.#seen.set(base, n + 1);
      this.#bases.push(base);
      const size = entryBytes(entry);
      this.#sizes.push(size);
      this.bytes += size;
      this.raws.push(raw);
      this.items.push({ entry, id: n === 0 ? base : `${base}#${n}`, index: i });
      this.pairer.add(entry.parsed, i);
    }
    this.changedFrom = same;
    return same;
  }

  #rollback(keep: number): void {
    this.generation++;
    for (let i = this.items.length - 1; i >= keep; i--) {
      const base = this.#bases[i]!;
      const n = this.#seen.get(base)! - 1;
      if (n === 0) this.#seen.delete(base);
      else this.#seen.set(base, n);
      this.bytes -= this.#sizes[i]!;
    }
    this.#sizes.length = keep;
    this.items.length = keep;
    this.raws.length = keep;
    this.#bases.length = keep;
    this.pairer = new ToolPairer();
    for (let i = 0; i < keep; i++) this.pairer.add(this.items[i]!.entry.parsed, i);
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
  readonly #onEvict: ((sessionId: string) => void) | undefined;
  #total = 0;
  #bytes = 0;

  constructor(
    maxMessages = 200_000,
    maxBytes = Number.POSITIVE_INFINITY,
    onEvict?: (sessionId: string) => void,
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
  ): { indexed: IndexedHistory; changedFrom: number } {
    const indexed = this.get(sessionId);
    const before = indexed.length;
    const bytesBefore = indexed.bytes;
    const changedFrom = indexed.update(history, codec, index);
    this.#total += indexed.length - before;
    this.#bytes += indexed.bytes - bytesBefore;
    if (this.#total > this.#maxMessages || this.#bytes > this.#maxBytes) {
      for (const [id, other] of this.#sessions) {
        if (this.#total <= this.#maxMessages && this.#bytes <= this.#maxBytes) break;
        if (id === sessionId) continue;
        this.#total -= other.length;
        this.#bytes -= other.bytes;
        this.#sessions.delete(id);
        this.#onEvict?.(id);
      }
    }
    return { indexed, changedFrom };
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
