import type { TokenCounter } from '../counting/token-counter.js';
import { invalidMessage } from '../errors.js';
import { ShardedWeakMap } from '../sharded-map.js';
import type { TimeSlice } from '../time-slice.js';
import { flatString } from './flat-string.js';
import type { MessageCodec, ParsedMessage } from './formats/message-codec.js';
import { hashJson, hashJsonInSlices, type JsonHash } from './hash-json.js';
import { lanesString } from './hash-string.js';
import { fingerprintOf, identityShard } from './identity-shard.js';
import { hasLongString } from './json-pieces.js';
import { type CompactMessage, findSummarySpan } from './message.js';
import { guardDepth, safeJson } from './safe-json.js';

/** What is remembered about one message object between preflights. */
export interface IndexedEntry {
  readonly parsed: ParsedMessage;
  /** Content hash (the identity of messages that carry no id of their own), made from its lanes on each read. */
  readonly hash: string;
  /** The two 32-bit lanes of {@link hash} (as signed integers: small integers, no object of their own). */
  readonly hashHigh: number;
  readonly hashLow: number;
  /** The summary version when this is a `<COMPACT-SUMMARY vN>` message. */
  readonly summaryVersion: number | undefined;
  /** What is sent to the provider: the caller's object without `meta`. */
  readonly wire: unknown;
  /** The value checked to notice a message edited in place. */
  readonly fingerprint: unknown;
  /** The message's `meta` object when parsed (a new or removed `meta` means a new parse). */
  readonly metaRef: unknown;
  /** Token counts by counter (the entry itself: an object of their own per message was one more for every scavenge to copy). */
  readonly tokens: TokenCounts;
  /**
   * Its key in the content cache (to drop it when the sessions that sent it end): 30 bits of
   * {@link hash}, or of the hash of its content and `meta` when it has `meta`.
   */
  readonly contentKey?: number | undefined;
  /** The other lane of that key's hash, checked on a hit (with the key, 62 bits of it). */
  readonly contentCheck?: number | undefined;
  /** The length of its JSON (without `meta`), checked beside the key; the cache counts twice this in bytes. */
  readonly contentLength?: number | undefined;
}

/**
 * An entry's token counts by counter: the first two counters' (a cold call's bound, then the
 * exact count) in fields, any other's in a WeakMap made only then. A WeakMap per entry (one
 * for every message of a history) made each young-generation GC copy and walk ephemeron
 * tables while a cold history was counted (issue 47: scavenges over 20 ms). Holds its first
 * two counters strongly: the entry lives no longer than the manager that owns them.
 */
export class TokenCounts {
  #first: TokenCounter | undefined;
  #firstCount = 0;
  #second: TokenCounter | undefined;
  #secondCount = 0;
  #others: WeakMap<TokenCounter, number> | undefined;

  get(counter: TokenCounter): number | undefined {
    if (counter === this.#first) return this.#firstCount;
    if (counter === this.#second) return this.#secondCount;
    return this.#others?.get(counter);
  }

  set(counter: TokenCounter, count: number): void {
    if (this.#first === undefined || counter === this.#first) {
      this.#first = counter;
      this.#firstCount = count;
    } else if (this.#second === undefined || counter === this.#second) {
      this.#second = counter;
      this.#secondCount = count;
    } else {
      this.#others ??= new WeakMap();
      this.#others.set(counter, count);
    }
  }
}

/** One message of a history, positioned. */
export interface IndexedMessage {
  readonly entry: IndexedEntry;
  /** Stable id: explicit id or content hash, plus `#n` for the n-th repeat. */
  readonly id: string;
  readonly index: number;
}

/**
 * An entry, every field set at once (one hidden class for all: an object spread of an entry
 * built a hidden class per copy once its site had seen several shapes, issue 47), its token
 * counts in its own fields. A copy (for a rebuilt object, same content) shares the counts of
 * the entry it copies. Its hash is kept as two integers and printed on each read: a string of
 * its own per message was one more object alive per message of a history, copied by every
 * scavenge of a cold call (issue 47).
 */
class Entry extends TokenCounts implements IndexedEntry {
  readonly parsed: ParsedMessage;
  readonly hashHigh: number;
  readonly hashLow: number;
  readonly summaryVersion: number | undefined;
  readonly wire: unknown;
  readonly fingerprint: unknown;
  readonly metaRef: unknown;
  readonly contentKey: number | undefined;
  readonly contentCheck: number | undefined;
  readonly contentLength: number | undefined;
  readonly #counts: TokenCounts;

  constructor(
    parsed: ParsedMessage,
    hash: { readonly high: number; readonly low: number },
    summaryVersion: number | undefined,
    wire: unknown,
    fingerprint: unknown,
    metaRef: unknown,
    content: { readonly key: number; readonly check: number; readonly length: number } | undefined,
    from?: IndexedEntry,
  ) {
    super();
    this.parsed = parsed;
    this.hashHigh = hash.high | 0;
    this.hashLow = hash.low | 0;
    this.summaryVersion = summaryVersion;
    this.wire = wire;
    this.fingerprint = fingerprint;
    this.metaRef = metaRef;
    this.contentKey = content?.key;
    this.contentCheck = content?.check;
    this.contentLength = content?.length;
    this.#counts = from?.tokens ?? this;
  }

  get hash(): string {
    return lanesString(this.hashHigh, this.hashLow);
  }

  get tokens(): TokenCounts {
    return this.#counts;
  }
}

/** Whether two entries have the same content hash (compared by lanes, no string made). */
export const sameHash = (a: IndexedEntry, b: IndexedEntry) =>
  a.hashHigh === b.hashHigh && a.hashLow === b.hashLow;

/** The content cache's key of the lanes `high`, `low`: 30 bits (a small integer on every build). */
const contentKeyOf = (low: number) => low & 0x3fffffff;

/** The bytes the content cache counts for an entry (its JSON's length, twice: the parse and the wire). */
const entryCacheBytes = (entry: IndexedEntry) => 2 * (entry.contentLength ?? 0);

/** The largest number of entries kept in the content-keyed cache. */
export const DEFAULT_CONTENT_CACHE_SIZE = 50_000;

/**
 * Parses messages once and remembers them: by object identity (a history that grows by
 * appending costs one parse and one count per new message) and, for callers that rebuild
 * their message objects each call, by content. Edits made in place to a message's content
 * are noticed (the content reference changes); deep edits inside content arrays are not,
 * so treat messages as immutable once sent.
 */
export class MessageIndex {
  /** Parses by object identity, spread over small tables (one of 300k messages grew in a 13 ms `set`). */
  #byObject = new ShardedWeakMap<object, IndexedEntry>();
  /**
   * Parses by content, keyed by 30 bits of a 64-bit hash (see {@link IndexedEntry.contentKey});
   * the hash's other lane, the entry's format and JSON length, checked on a hit, tell a
   * collision (then a miss). A number, not a string: a key string per message was copied by
   * every scavenge of a cold index (issue 47).
   */
  readonly #byContent = new Map<number, IndexedEntry>();
  /** Approximate bytes of the cached parses (each its serialized length, twice: the parse and the wire). */
  #bytes = 0;
  readonly #maxContentEntries: number;
  readonly #maxBytes: number;

  /**
   * @param maxContentEntries Parses kept in the content cache (oldest dropped first).
   * @param maxBytes Their approximate bytes, capped the same way (the manager passes its
   *   `cacheMaxBytes`), so a long-lived manager of large messages stays bounded.
   */
  constructor(maxContentEntries = DEFAULT_CONTENT_CACHE_SIZE, maxBytes = Number.POSITIVE_INFINITY) {
    this.#maxContentEntries = maxContentEntries;
    this.#maxBytes = maxBytes;
  }

  /** Drops the oldest parses until `incoming` more bytes and one more entry fit the caps. */
  #makeRoom(incoming: number): void {
    if (this.#byContent.size < this.#maxContentEntries && this.#bytes + incoming <= this.#maxBytes) return;
    // Oldest first (a Map iterates in insertion order); a tenth of the entries at least, so
    // that eviction is not paid on every insert.
    // By bytes, down to nine tenths of the cap: evicting just enough on every insert walked the
    // Map's deleted slots from its start each time (a cost that grew with the history).
    let drop = this.#byContent.size >= this.#maxContentEntries ? Math.ceil(this.#maxContentEntries / 10) : 0;
    const bytesAfter = this.#bytes + incoming <= this.#maxBytes ? this.#maxBytes : this.#maxBytes * 0.9;
    for (const [key, entry] of this.#byContent) {
      if (drop <= 0 && this.#bytes + incoming <= bytesAfter) break;
      this.#byContent.delete(key);
      this.#bytes -= entryCacheBytes(entry);
      drop--;
    }
  }

  /** The entry of `raw` when it is cached by identity and unchanged since. */
  #cached(raw: object, codec: MessageCodec): IndexedEntry | undefined {
    const cached = this.#byObject.get(identityShard(raw as Record<string, unknown>), raw);
    if (
      cached &&
      cached.fingerprint === fingerprintOf(raw as Record<string, unknown>) &&
      cached.metaRef === (raw as Record<string, unknown>).meta &&
      cached.parsed.format === codec.format
    ) {
      return cached;
    }
    return undefined;
  }

  /**
   * {@link entry}, a message with long strings (a tool result of megabytes) hashed a piece at a
   * time with a turn of the loop whenever `slice` is due (the same hashes: the same entry).
   */
  entryInSlices(
    raw: unknown,
    index: number,
    codec: MessageCodec,
    slice: TimeSlice,
  ): IndexedEntry | Promise<IndexedEntry> {
    if (raw === null || typeof raw !== 'object' || this.#cached(raw, codec) || !hasLongString(raw))
      return this.entry(raw, index, codec);
    return this.#entryHashedInSlices(raw, index, codec, slice);
  }

  async #entryHashedInSlices(raw: object, index: number, codec: MessageCodec, slice: TimeSlice) {
    const record = raw as Record<string, unknown>;
    const fingerprint = fingerprintOf(record);
    const meta = record.meta;
    const hashed = await hashJsonInSlices(raw, slice);
    // Edited during a pause (content or `meta` replaced): hashed again, at once.
    const same = fingerprintOf(record) === fingerprint && record.meta === meta;
    return this.entry(raw, index, codec, same ? hashed : undefined);
  }

  /**
   * The entry of one message object (parsed once; cached by identity, then by content).
   * `given`: its hashes, computed ahead ({@link entryInSlices}).
   */
  entry(raw: unknown, index: number, codec: MessageCodec, given?: JsonHash): IndexedEntry {
    if (raw === null || typeof raw !== 'object')
      throw invalidMessage(index, '', `must be an object (got ${raw === null ? 'null' : typeof raw})`);
    const cached = this.#cached(raw, codec);
    if (cached) return cached;
    const fingerprint = fingerprintOf(raw as Record<string, unknown>);
    const meta = (raw as Record<string, unknown>).meta;
    // The identity hash ignores `meta` (ids stay stable when a caller adds a flag or persists
    // the stripped view); the cache key does not (the parse carries `meta`).
    // Keyed by 64-bit hashes, the format and length checked on the entry, rather than the text
    // itself, so the cache holds no copy of the conversation.
    const hashed = given ?? hashJson(safeJson(raw, index), meta);
    const hash = { high: hashed.high, low: hashed.low };
    const content = {
      key: contentKeyOf(hashed.contentLow),
      check: hashed.contentHigh | 0,
      length: hashed.length,
    };
    const key = content.key;
    let entry = this.#byContent.get(key);
    if (
      entry !== undefined &&
      (entry.parsed.format !== codec.format ||
        entry.contentLength !== content.length ||
        entry.contentCheck !== content.check)
    ) {
      // Another message under the same key (another format, or a collision): replaced.
      this.#byContent.delete(key);
      this.#bytes -= entryCacheBytes(entry);
      entry = undefined;
    }
    if (!entry) {
      const parsed = guardDepth(() => codec.parse(raw, index), index);
      const summaryVersion =
        parsed.kind === 'message' &&
        parsed.role === codec.summaryRole &&
        parsed.toolCalls.length === 0 &&
        parsed.toolResults.length === 0
          ? findSummarySpan(parsed.text)?.version
          : undefined;
      const wire = codec.toWire(positioned(parsed, '', index));
      entry = new Entry(parsed, hash, summaryVersion, wire, fingerprint, meta, content);
      const bytes = 2 * content.length;
      this.#makeRoom(bytes);
      this.#byContent.set(key, entry);
      this.#bytes += bytes;
    } else if (entry.parsed.raw !== raw) {
      // Same content, new object: reuse the parse and counts, but send this object.
      const parsed: ParsedMessage = Object.assign({}, entry.parsed, { raw });
      const wire = codec.toWire(positioned(parsed, '', index));
      entry = new Entry(parsed, hash, entry.summaryVersion, wire, fingerprint, entry.metaRef, content, entry);
    }
    this.#byObject.set(identityShard(raw as Record<string, unknown>), raw, entry);
    return entry;
  }

  /** Messages held in the content cache. */
  get size(): number {
    return this.#byContent.size;
  }

  /** Their approximate bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Drops the parses of `entries` from both caches (the messages of a session that ended):
   * nothing of them stays reachable from the manager, even while the caller keeps the
   * message objects. A session still holding one keeps its own entry; only the sharing is lost.
   */
  forget(entries: Iterable<IndexedEntry>): void {
    for (const entry of entries) {
      // The identity cache too: a caller that keeps its history would keep the parses alive.
      const raw = entry.parsed.raw as object;
      let shard = identityShard(raw as Record<string, unknown>);
      // A block edited in place since may have moved the message's shard: looked for in all.
      if (this.#byObject.get(shard, raw) !== entry) shard = this.#byObject.findAnywhere(raw, entry);
      if (shard >= 0) this.#byObject.delete(shard, raw);
      const key = entry.contentKey;
      const cached = key === undefined ? undefined : this.#byContent.get(key);
      if (
        cached === undefined ||
        !sameHash(cached, entry) ||
        cached.contentCheck !== entry.contentCheck ||
        cached.contentLength !== entry.contentLength ||
        cached.parsed.format !== entry.parsed.format
      )
        continue;
      this.#byContent.delete(key!);
      this.#bytes -= entryCacheBytes(cached);
    }
  }

  /** Drops every cached parse. */
  clear(): void {
    this.#byContent.clear();
    this.#bytes = 0;
    this.#byObject = new ShardedWeakMap();
  }

  /** Indexes a whole history, giving every message its stable id. */
  index(messages: readonly unknown[], codec: MessageCodec): IndexedMessage[] {
    const out: IndexedMessage[] = new Array(messages.length);
    const seen = new Map<string, number>();
    for (let i = 0; i < messages.length; i++) {
      const entry = this.entry(messages[i], i, codec);
      const base = entry.parsed.explicitId ?? lanesString(entry.hashHigh, entry.hashLow, 'h:');
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out[i] = { entry, id: n === 0 ? base : flatString(base, '#', String(n)), index: i };
    }
    return out;
  }
}

/** True when `raw` is still the message `entry` was parsed from (not edited in place since). */
export function isCurrentEntry(entry: IndexedEntry, raw: unknown): boolean {
  const record = raw as Record<string, unknown>;
  return (
    entry.parsed.raw === raw && entry.fingerprint === fingerprintOf(record) && entry.metaRef === record.meta
  );
}

/** Token count of an indexed message with `counter`, cached on the entry. */
export function entryTokens(item: IndexedMessage, counter: TokenCounter): number {
  const entry = item.entry;
  let count = entry.tokens.get(counter);
  if (count === undefined) {
    count = counter.countMessage(toCompactMessage(item));
    entry.tokens.set(counter, count);
  }
  return count;
}

/** Materializes the internal message of an indexed one. */
export function toCompactMessage(item: IndexedMessage): CompactMessage {
  return positioned(item.entry.parsed, item.id, item.index);
}

/**
 * `{ ...parsed, id, index }`, built with `Object.assign`: on Node 20 a literal that adds
 * properties after a spread builds a new hidden class per call (~4 us a message, against
 * ~0.2 us), and this runs for every new message of every call.
 */
export function positioned(parsed: ParsedMessage, id: string, index: number): CompactMessage {
  return Object.assign({}, parsed, { id, index });
}
