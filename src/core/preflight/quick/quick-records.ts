/**
 * The quick records of a manager's sessions (quick-resume.ts reads them): noted after calls
 * whose answer was the history as given, extended and written after those calls.
 */
import type { CompactPolicy } from '../../policy.js';
import type { SessionState, SessionStore } from '../../session/session-store.js';
import { type QuickRecord, writeQuickRecord } from '../../store/stored-counts.js';
import { TimeSlice } from '../../time-slice.js';
import type { SessionView } from '../view/session-view.js';
import { buildLayout, type LayoutSnapshot, layoutEligible, snapshotOf } from './quick-compacted.js';
import { samplePrints } from './quick-print.js';

/** Histories from this length leave a quick record (shorter ones index within a few milliseconds). */
export const QUICK_FROM = 256;

/** Messages a history grows by between two records written from one view. */
const QUICK_STEP = 8;

/** What a note reads of the call. */
interface NotedCall {
  readonly key: string;
  readonly messages: readonly unknown[];
  readonly policy: Readonly<CompactPolicy>;
}

/** The pin rule as recorded. */
export function ruleOf(policy: Readonly<CompactPolicy>): string {
  return `${policy.rolesNeverPrune.join(',')}|${policy.protectedFlag}`;
}

export function pinsOf(state: SessionState | undefined): string {
  return (state?.pinnedIds ?? []).join(' ');
}

/** A state whose view is the history as given, but for its pins. */
export function plainState(state: SessionState | undefined): boolean {
  if (state === undefined) return true;
  return (
    state.version === 0 &&
    state.summary === undefined &&
    state.coveredIds.length === 0 &&
    !state.keptIds?.length &&
    !state.userTextIds?.length &&
    (state.rewrites === undefined || Object.keys(state.rewrites).length === 0) &&
    state.anchor === undefined &&
    !state.branches?.length &&
    state.pace === undefined &&
    state.local === undefined
  );
}

/** Where a session's quick record stands: the print so far, extended as its view grows. */
interface Track {
  readonly view: SessionView;
  readonly generation: number;
  length: number;
  /** Positions of the messages sent without their `meta`. */
  readonly metaAt: number[];
  /** Pinned messages among them. */
  pinned: number;
  /** The history length of the last record noted from this view (-1: none yet). */
  written: number;
  /** False once the view is not the history as given. */
  plain: boolean;
}

/** One noted call: the record to write once its print is extended to `record.length`. */
interface Job {
  readonly track: Track;
  readonly messages: readonly unknown[];
  readonly record: QuickRecord;
  /** A compacted view's request as it stood at the call (quick-compacted.ts). */
  readonly compacted?: LayoutSnapshot;
}

/** The quick records of a manager's sessions: noted after calls, written after them. */
export class QuickRecords {
  readonly #store: () => SessionStore;
  /** By view: a track lives as long as its view (an evicted or ended session's goes with it). */
  #tracks = new WeakMap<SessionView, Track>();
  readonly #writing = new Map<string, Promise<void>>();
  readonly #next = new Map<string, Job>();

  constructor(store: () => SessionStore) {
    this.#store = store;
  }

  /**
   * Notes a call that did not trigger, with its session's exact view: when that view is the
   * history as given (what the call sent), the record is extended for the new messages and
   * written, both after the call; when it is a compacted view with its request assembled (an
   * untriggered answer's: `summaryTokens` its summary message's tokens), the record holds that
   * request's layout (quick-compacted.ts).
   */
  note(
    input: NotedCall,
    scope: string,
    view: SessionView,
    state: SessionState | undefined,
    generation: number,
    summaryTokens = 0,
  ): void {
    const { key, messages } = input;
    const n = messages.length;
    if (n < QUICK_FROM) return;
    let track = this.#tracks.get(view);
    if (!track || track.generation !== generation || track.length > n) {
      track = { view, generation, length: 0, metaAt: [], pinned: 0, plain: true, written: -1 };
      this.#tracks.set(view, track);
    }
    const plain =
      track.plain &&
      view.entries.length === n &&
      view.version === 0 &&
      view.summaryItem === undefined &&
      plainState(state);
    let compacted: LayoutSnapshot | undefined;
    if (!plain) {
      track.plain = false;
      if (!layoutEligible(view, state, n)) return;
      compacted = snapshotOf(view, state!, summaryTokens);
    }
    // A process's first note of a view is written (a serverless process makes one call); later
    // ones once the history grew by QUICK_STEP (a fresh process counts the messages after it).
    if (track.written >= 0 && n - track.written < QUICK_STEP) return;
    track.written = n;
    const record: QuickRecord = {
      scope,
      rule: ruleOf(input.policy),
      pins: pinsOf(state),
      length: n,
      print: '',
      metaAt: [],
      sums: { ...view.sums },
      pinned: compacted ? compacted.cache.pinned : 0,
    };
    const job: Job = compacted ? { track, messages, record, compacted } : { track, messages, record };
    if (this.#writing.has(key)) this.#next.set(key, job);
    else this.#start(key, job);
  }

  /** Runs `job` after the call, then the newest job noted meanwhile; one per session at a time. */
  #start(key: string, first: Job): void {
    const write = (async () => {
      const slice = new TimeSlice();
      for (let job: Job | undefined = first; job; job = this.#next.get(key)) {
        this.#next.delete(key);
        await slice.pause();
        if (await (job.compacted ? withLayout(job, job.compacted, slice) : extend(job, slice)))
          await writeQuickRecord(this.#store(), key, job.record);
      }
    })().finally(() => this.#writing.delete(key));
    this.#writing.set(key, write);
  }

  /** Waits for the writes in flight. */
  async settled(): Promise<void> {
    await Promise.all([...this.#writing.values()]);
  }

  /** Forgets a session (its write in flight finishes). */
  forget(key: string): void {
    this.#next.delete(key);
  }

  /** Forgets every session. */
  clear(): void {
    this.#tracks = new WeakMap();
    this.#next.clear();
  }
}

/**
 * Extends the job's print to its length, in slices, checking that every message went out as
 * the caller gave it (no rewrite; `meta` stripped); true when the record can be written.
 */
async function extend(job: Job, slice: TimeSlice): Promise<boolean> {
  const { track, messages, record } = job;
  const entries = track.view.entries;
  if (track.length > record.length || entries.length < record.length) return false;
  for (let i = track.length; i < record.length && track.plain; i++) {
    const entry = entries[i]!;
    // Sent as given: the message, or the message without its `meta` (what the codec's wire is).
    const wire = entry.item.entry.wire;
    if (entry.item.index !== i || entry.rewrite !== undefined || entry.wire !== wire) track.plain = false;
    else if (wire !== entry.item.entry.parsed.raw) track.metaAt.push(i);
    if (entry.pinned) track.pinned++;
    track.length = i + 1;
    if ((i & 255) === 255 && slice.due()) {
      await slice.pause();
      // A later call rebuilt the history meanwhile: its own job starts over.
      if (track.length !== i + 1) return false;
    }
  }
  if (!track.plain || track.length !== record.length) return false;
  record.print = samplePrints((i) => messages[i], record.length);
  record.metaAt = [...track.metaAt];
  record.pinned = track.pinned;
  return true;
}

/** Sets the job's record to its compacted view's layout, in slices; true when it can be written. */
async function withLayout(job: Job, snapshot: LayoutSnapshot, slice: TimeSlice): Promise<boolean> {
  const built = await buildLayout(snapshot, slice);
  if (!built) return false;
  job.record.print = samplePrints((i) => job.messages[i], job.record.length);
  job.record.metaAt = built.metaAt;
  job.record.compacted = built.layout;
  return true;
}
