/**
 * The state a session store holds for one session: the rolling summary, what it covers and
 * the rewrites earlier compactions made. Types only, below the store and its checks.
 */

/** The rolling summary of a session. */
export interface SessionSummary {
  /** The summary body, without tags. */
  text: string;
  /** Its token count with the session's counter. */
  tokens: number;
  /** Which summarizer wrote it (after fallbacks). */
  summarizer: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

/**
 * A rewrite the reduction cascade made to one message, replayed identically on every later
 * call (so provider prompt caches keep hitting). The original is in the archive under `ref`.
 */
export interface SessionRewrite {
  /** `cleared`: a tool result replaced by a placeholder; `shortened`: long call arguments cut head…tail; `cut`: an oversized message cut head…tail. */
  kind: 'cleared' | 'shortened' | 'cut';
  /** The archive reference of the original (`tool-…`, `args-…`, `cut-…`). */
  ref: string;
  /** For `shortened` and `cut`: the characters kept of each shortened text. */
  keepChars?: number;
  /** True when the original could not be archived: the placeholder names no recall ref. */
  unarchived?: boolean;
  /**
   * The content hash of the message rewritten: the rewrite is applied only to a message with
   * this content (tool-call ids such as `call_0` are reused across turns and conversations).
   */
  hash?: string;
}

/**
 * The history a state was made from, as far as it matters: its first `length` messages,
 * identified by the prefix chain of their stable ids and content hashes. A later history
 * resumes the state only when its own first `length` messages chain to the same value and
 * it holds at least one message more (a rewind, an edit of a covered message, another
 * conversation or another branch does not).
 */
export interface HistoryAnchor {
  length: number;
  chain: string;
}

/**
 * What the manager remembers about one session: the summary and which messages it
 * covers, by stable message id. The view sent to the model is pinned messages + the
 * summary + every message not covered.
 */
export interface SessionState {
  sessionId: string;
  /** Number of compactions so far; the summary message is tagged `v{version}`. */
  version: number;
  /** The current summary; absent before the first compaction or after a pruning-only one. */
  summary?: SessionSummary;
  /** Ids of the messages folded into the summary (or pruned), in history order. */
  coveredIds: string[];
  /**
   * Ids of messages that were pinned (protected) when seen: they stay pinned when the caller
   * persists the compacted view, from which `meta` is stripped.
   */
  pinnedIds?: string[];
  /**
   * Ids of the recent messages the last compaction kept: with `coveredIds`, they tell
   * whether a history belongs to this session.
   */
  keptIds?: string[];
  /**
   * What the compaction left: the request's tokens (the trough the cost trigger and the
   * trigger's distance measure from).
   */
  pace?: { trough: number };
  /**
   * Ids of the user's own text messages older than the verbatim suffix that compactions kept
   * verbatim (policy `userTextShare`): they are sent before the summary, with the pinned layer.
   */
  userTextIds?: string[];
  /** Rewrites of messages still in the view, by message id. */
  rewrites?: Record<string, SessionRewrite>;
  /**
   * What this state's coverage stands on (absent in states written before anchors existed,
   * which are matched by their covered ids).
   */
  anchor?: HistoryAnchor;
  /**
   * Earlier states of the session, newest first: the ancestors of this one and other
   * branches (a fork, a rewind, another conversation under the same id), each without
   * branches of its own. A history that does not match this state resumes the one it
   * matches, so alternating branches do not summarize again on every call. At most
   * {@link MAX_BRANCHES}, and at most {@link MAX_BRANCH_BYTES} of them as JSON.
   */
  branches?: SessionState[];
  /**
   * Prepared summaries only (`<key>::prepared`): the MAC over the session, the version, the
   * base it covers and the text, under the installation's summary key. A record without a
   * valid one is never adopted.
   */
  mac?: string;
  /**
   * Prepared summaries only: how long a queue's schedule held the job before the run that
   * published it (ms); the agents' learned queue latency leaves it out.
   */
  heldMs?: number;
  /**
   * Prepared summaries only: how long the job took from its enqueue to this publish (ms), the
   * held time left out, measured by the worker on one clock (the job's `enqueuedAt` moved onto
   * the worker's clock by the fleet's). The agents learn the queue's latency from it, not from
   * `createdAt`, which is the worker's clock.
   */
  queueMs?: number;
  /**
   * Set on a state made by this process while the store could not take it (an outage, or a
   * store that kept changing under the compaction): it is never written to the store, its
   * summary is sent as a local summary that claims no version (`<COMPACT-LOCAL-SUMMARY>`),
   * and `version` is the highest version known when it was made (the one it extends), so no
   * version ever gets a second text. Once the store answers, its state replaces this one.
   */
  local?: true;
  /**
   * Set on the form a store holds of a long session's state: its lists of at least 64 entries,
   * each packed into one string (their own fields are then written empty). Written and read by
   * the manager only (a state it reads is unpacked before use); a store keeps it as it keeps
   * the rest of the state.
   */
  packed?: PackedLists;
  /** Epoch milliseconds of the last change. */
  updatedAt: number;
}

/** One list of a {@link PackedLists}: its number of entries and the entries as one string. */
export interface PackedList {
  count: number;
  /** Ids joined by spaces; rewrites one per line, their fields tab-separated. */
  text: string;
}

/** The packed lists of a stored state (see {@link SessionState.packed}). */
export interface PackedLists {
  /** The form's version. */
  v: 1;
  coveredIds?: PackedList;
  pinnedIds?: PackedList;
  keptIds?: PackedList;
  userTextIds?: PackedList;
  rewrites?: PackedList;
}

/** Options of {@link SessionStore.set}. */
export interface SessionStoreSetOptions {
  /**
   * Write only if the stored state still has this version (`0` for "no state yet").
   * Lets shared stores run one compaction per trigger across replicas.
   */
  expectedVersion?: number;
  /**
   * The {@link SessionLock.token} of the lock the writer holds: the write is refused when a
   * newer lock was issued for the session since (the writer's lock lapsed and another process
   * took over), so a stalled holder cannot overwrite the newer holder's state.
   */
  fencingToken?: number;
}

/** Earlier states kept per session (see {@link SessionState.branches}). */
export const MAX_BRANCHES = 4;
/** Their largest total size as JSON (characters); the oldest are dropped first. */
export const MAX_BRANCH_BYTES = 512 * 1024;
