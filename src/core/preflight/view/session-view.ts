/**
 * The types of a session's view (what resume-view.ts builds and the later steps read), apart
 * from the steps so that the index and the view do not import each other.
 */
import type { TokenCounter } from '../../counting/token-counter.js';
import type { CompactMessage } from '../../messages/message.js';
import type { IndexedMessage } from '../../messages/message-index.js';
import type { PinRule } from '../../messages/partition.js';
import type { SessionRewrite, SessionState } from '../../session/session-store.js';
import type { ShardedSet } from '../../sharded-map.js';

/** One message of the view. */
export interface ViewEntry {
  readonly item: IndexedMessage;
  readonly pinned: boolean;
  /** The pairing round the message belongs to (-1 outside any). */
  readonly round: number;
  /** What is sent: the caller's message without `meta`, or its rewrite. */
  wire: unknown;
  /** Tokens of `wire`. */
  tokens: number;
  /** Tokens of the message as the caller wrote it. */
  readonly originalTokens: number;
  /** The rewrite applied, if any. */
  rewrite?: SessionRewrite;
  /**
   * A user text message older than the verbatim suffix, kept verbatim by a compaction: it is
   * sent before the summary (with the pinned layer) and competes again at the next compaction.
   */
  userText?: boolean;
  /**
   * Before the newest provider compaction boundary (an OpenAI `compaction` item, an Anthropic
   * `compaction` block): the provider drops it, so it is sent as the caller wrote it, pinned,
   * and counted as 0 tokens.
   */
  beforeBoundary?: boolean;
  /**
   * The message as content when it differs from the caller's: a message that also carried the
   * session's signed summary, without it (the summary goes as the manager's own message). The
   * summarizer and the rankers read this instead of the caller's message.
   */
  content?: CompactMessage;
}

/** A rewrite made real for one message: the object sent and its tokens. */
export interface RealizedRewrite {
  wire: unknown;
  tokens: number;
}

/** The session's view of its history. */
export interface SessionView {
  readonly state: SessionState | undefined;
  readonly rule: PinRule;
  readonly generation: number;
  readonly counter: TokenCounter;
  readonly format: string;
  /** The stored state this history resumes (the record, one of its branches, or a persisted view's). */
  readonly matched: SessionState | undefined;
  /** The version the next summary takes (versions only grow across branches). */
  readonly nextVersion: number;
  /** Set when the session has stored states and none holds for this history (see match-state.ts). */
  readonly divergence: { reason: 'shorter' | 'diverged'; storedVersion: number } | undefined;
  /** History positions processed so far. */
  processed: number;
  /** A summary message found in the history (a persisted view), when accepted. */
  readonly summaryItem: IndexedMessage | undefined;
  /**
   * The signed summary text alone when `summaryItem` holds other text too: the summary is sent
   * as the manager's message of this text, the rest of the item as an entry (its `content`).
   */
  readonly summarySigned?: string;
  /** The summary version the view is at (the matched state's). */
  readonly version: number;
  /** The body of the current summary, if any. */
  readonly previousSummary: string | undefined;
  /** True when no stored state holds for this history (see `divergence`). */
  readonly mismatch: boolean;
  /** Visible messages in history order (the summary message excluded). */
  readonly entries: ViewEntry[];
  /** Rounds with a pinned member (pinned whole). */
  readonly pinnedRounds: Set<number>;
  /** Ids protected by the state, and covered by the summary. */
  readonly pinnedIds: ReadonlySet<string>;
  /** A `Set`, or a {@link ShardedSet} when built from many ids (see sharded-map.ts). */
  readonly coveredIds: ReadonlySet<string> | ShardedSet;
  /** Token sums of the entries by role group. */
  readonly sums: { system: number; developer: number; messages: number };
  /** The stored summary as a message in this format, built once per view. */
  summaryMessage?: { wire: unknown; tokens: number };
  /** The assembled request of the untriggered path, extended as the view grows (see run-preflight.ts). */
  assembled?: AssembledCache;
}

/** The untriggered answer of a view, kept so that a warm call appends instead of rebuilding. */
export interface AssembledCache {
  summaryWire: unknown;
  /** Entries already in `wires`. */
  count: number;
  wires: unknown[];
  pinned: number;
  /** Entries that go before the summary (pinned, and user text kept verbatim). */
  head: number;
}
