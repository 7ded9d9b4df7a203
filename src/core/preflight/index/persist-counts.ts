/**
 * The session's token counts, kept with its state (store/stored-counts.ts): read on the
 * first call of a long history this process has not indexed, so that counting reuses them
 * (count-ahead.ts); written after a call, in slices and in the background, each time the
 * history has grown by an eighth since the last write (so the writes cost O(1) per message
 * over a session's life).
 */
import type { TokenCounter } from '../../counting/token-counter.js';
import type { MessageFormat } from '../../messages/message.js';
import { type IndexedEntry, sameHash } from '../../messages/message-index.js';
import type { SessionStore } from '../../session/session-store.js';
import { ShardedMap } from '../../sharded-map.js';
import { decodeStoredCounts, readStoredCounts, writeStoredCounts } from '../../store/stored-counts.js';
import { runStepsYielding, TimeSlice } from '../../time-slice.js';
import { QuickRecords } from '../quick/quick-records.js';
import type { IndexedHistory } from './index-request.js';

/** Histories shorter than this are counted again rather than stored (a recount takes well under a slice). */
export const PERSIST_COUNTS_FROM = 256;

/** Stored counts decoded between two looks at the clock. */
const DECODE_BATCH = 256;

/** The scope of counts made by counter `counterName` for `model` and `format` (a stored record is used only within its scope). */
export function countsScope(counterName: string, model: string, format: MessageFormat): string {
  return `${counterName}|${model}|${format}`;
}

/**
 * The content hashes a walk over a history has met, by their lanes: 30 bits of the low lane
 * map to the first entry met with them (small integers and entries alive anyway: a Set of hash
 * strings kept a string per message alive through a write's slices, survivors for the
 * scavenges of a cold call, issue 47), and the hash strings of the rare entries whose key
 * another hash took first. Tells the same hashes apart as a Set of the strings would.
 */
export class HashesSeen {
  /** Sharded: a `Map` of 300k hashes grew in one `set` that held the loop ~15 ms. */
  readonly #first = new ShardedMap<IndexedEntry, number>();
  #collided: Set<string> | undefined;

  /** True the first time `entry`'s hash is met. */
  firstSight(entry: IndexedEntry): boolean {
    const key = entry.hashLow & 0x3fffffff;
    const first = this.#first.get(key);
    if (first === undefined) {
      this.#first.set(key, entry);
      return true;
    }
    if (sameHash(first, entry)) return false;
    this.#collided ??= new Set();
    const hash = entry.hash;
    if (this.#collided.has(hash)) return false;
    this.#collided.add(hash);
    return true;
  }
}

/** Writes in flight and where each session's last write stood (by history length). */
export class PersistedCounts {
  readonly #store: SessionStore;
  readonly #counter: TokenCounter;
  readonly #model: string;
  /** The history length at each session's last write (or read). */
  readonly #written = new Map<string, number>();
  readonly #pending = new Map<string, Promise<void>>();
  /** Exact counting left for after a first call decided from a bound (bound-first-call.ts), by session. */
  readonly #finishing = new Map<string, Promise<void>>();
  /** The sessions' quick records (quick-resume.ts): a fresh process's first call without indexing. */
  readonly quick = new QuickRecords(() => this.#store);

  constructor(store: SessionStore, counter: TokenCounter, model: string) {
    this.#store = store;
    this.#counter = counter;
    this.#model = model;
  }

  /** The scope of counts made by this manager's counter for `format`. */
  scope(format: MessageFormat): string {
    return countsScope(this.#counter.name, this.#model, format);
  }

  /**
   * The counts stored for `key`, by content hash (`undefined` when none can be used): decoded
   * in slices, with no list split at once (a 16k-message record split in one piece held the
   * loop about 14 ms and fed the scavenger 32k strings).
   */
  async read(key: string, format: MessageFormat): Promise<Map<string, number> | undefined> {
    const stored = await readStoredCounts(this.#store, key, this.scope(format));
    if (!stored) return undefined;
    const counts = new Map<string, number>();
    if (!(await runStepsYielding(decodeStoredCounts(stored, counts, DECODE_BATCH)))) return undefined;
    this.#written.set(key, counts.size);
    return counts;
  }

  /** Writes the counts of `history` after this call when it has grown enough since the last write. */
  schedule(key: string, history: IndexedHistory): void {
    const length = history.length;
    if (length < PERSIST_COUNTS_FROM || this.#pending.has(key) || history.format === undefined) return;
    const written = this.#written.get(key) ?? 0;
    if (length - written < Math.max(PERSIST_COUNTS_FROM, written / 8)) return;
    this.#written.set(key, length);
    const write = this.#write(key, history, history.format).finally(() => this.#pending.delete(key));
    this.#pending.set(key, write);
  }

  async #write(key: string, history: IndexedHistory, format: MessageFormat): Promise<void> {
    const slice = new TimeSlice();
    // After the call: its answer is not held up by the walk below.
    await slice.pause();
    const generation = history.generation;
    const items = history.items;
    // The lists are joined a piece at a time (a 20k-message history's lists joined at once
    // held the loop about 9 ms on a loaded machine), each piece added to a rope (`+` of two
    // strings copies neither): one join of the pieces of 300k messages made a 7.6 MB string in
    // one step, 30-40 ms (issue 47). The store flattens it when it writes it out, if it does.
    const lists = { hashes: '', tokens: '' };
    const add = (hashList: string, tokenList: string) => {
      lists.hashes = lists.hashes === '' ? hashList : `${lists.hashes} ${hashList}`;
      lists.tokens = lists.tokens === '' ? tokenList : `${lists.tokens} ${tokenList}`;
    };
    let hashes: string[] = [];
    let tokens: number[] = [];
    const seen = new HashesSeen();
    for (let i = 0; i < items.length; i++) {
      const entry = items.at(i)!.entry;
      const count = entry.tokens?.get(this.#counter);
      if (count !== undefined && seen.firstSight(entry)) {
        hashes.push(entry.hash);
        tokens.push(count);
      }
      if ((i & 255) === 255 && hashes.length > 0) {
        add(hashes.join(' '), tokens.join(' '));
        hashes = [];
        tokens = [];
      }
      if ((i & 255) === 255 && slice.due()) {
        await slice.pause();
        // Rolled back meanwhile (an edit, another branch): the next call writes again.
        if (history.generation !== generation) {
          this.#written.delete(key);
          return;
        }
      }
    }
    if (hashes.length > 0) add(hashes.join(' '), tokens.join(' '));
    const ok = await writeStoredCounts(this.#store, key, { scope: this.scope(format), ...lists });
    // A failed write is tried again once the history has grown by another eighth, not on every call.
    void ok;
  }

  /** Runs `work` (the exact counting after a bounded call) for `key`; the session's next call waits for it. */
  finishAfter(key: string, work: () => Promise<void>): void {
    const done: Promise<void> = work()
      .catch(() => undefined)
      .finally(() => {
        if (this.#finishing.get(key) === done) this.#finishing.delete(key);
      });
    this.#finishing.set(key, done);
  }

  /** The exact counting still running for `key`, if any. */
  finishing(key: string): Promise<void> | undefined {
    return this.#finishing.get(key);
  }

  /** Waits for the writes and exact counting in flight (shutdown; each write is bounded in time). */
  async settled(): Promise<void> {
    await Promise.all([...this.#finishing.values()]);
    await Promise.all([...this.#pending.values()]);
    await this.quick.settled();
  }

  /** Forgets a session (`endSession`): its write in flight finishes, then nothing of it is held. */
  forget(key: string): void {
    this.#written.delete(key);
    this.quick.forget(key);
  }

  /** Forgets every session. */
  clear(): void {
    this.#written.clear();
    this.quick.clear();
  }
}
