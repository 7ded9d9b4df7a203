import type { AnyCompactEvent } from '../events/events.js';

/** A summary as archived next to its transcript. */
export interface ArchivedSummary {
  sessionId: string;
  /** The compaction step (= summary version). */
  step: number;
  /** The full summary message text, tags included. */
  text: string;
  tokens: number;
  strategy: string;
  summarizer: string;
  /** Ids of the messages this summary covers. */
  coveredIds: string[];
  /** Epoch milliseconds. */
  createdAt: number;
}

/**
 * The original of something compaction cleared, shortened, cut or summarized, archived
 * under a reference the model can pass to the recall tool (`agent-compaction/recall`).
 */
export interface ArchivedArtifact {
  /**
   * The reference named in the placeholder, cut marker or summary: a short token such as
   * `tool-3kf93jd02kd9` (`[a-z]+-[0-9a-z]+`), unique within its session.
   */
  ref: string;
  sessionId: string;
  /** What the original was. */
  kind: 'tool_result' | 'tool_arguments' | 'message' | 'summarized';
  /** The original text, redacted like every archive. */
  text: string;
  /** The tool's name, for tool results and arguments. */
  toolName?: string;
  /** Position of the message in the history when it was archived. */
  messageIndex?: number;
  /** The summary version whose compaction archived it. */
  step?: number;
  /** Epoch milliseconds. */
  createdAt: number;
}

/** Options of one archive write (the last, optional argument of each `save…` method). */
export interface ArchiveWriteOptions {
  /**
   * Aborted when the manager gives the write up (`archiveTimeoutMs`), its reason a
   * `storage_failed` error. An adapter that honours it stops the write (cancels the request,
   * writes nothing more) and leaves nothing under the write's name where it can; the shipped
   * adapters do (fs: no file is put in place after it; S3: the request is aborted; memory:
   * nothing is stored). Optional: the manager always passes one, callers of an adapter may not.
   */
  signal?: AbortSignal;
}

/**
 * Archives what compaction is about to remove, so nothing is ever lost: the full
 * transcript before each compaction, each summary, and every event.
 *
 * Everything handed to an adapter has already been redacted. Adapters may throw; the
 * manager turns a failed write into a `compact.error` event and the conversation goes on.
 *
 * Each write is given an {@link ArchiveWriteOptions} whose `signal` the manager aborts when
 * it gives the write up (`archiveTimeoutMs`); an adapter that ignores it still works (the write
 * given up then runs on in the background and lands, if ever, under its own name).
 */
export interface StorageAdapter {
  /** `fs`, `s3`, ... (reported as `storage_adapter` in `compact.archival`). */
  readonly name: string;
  /** Saves the full history (in the caller's format) before compaction `step`. Returns its path or key. */
  saveTranscript(
    sessionId: string,
    transcript: readonly unknown[],
    step: number,
    options?: ArchiveWriteOptions,
  ): Promise<string>;
  /** Saves the summary of compaction `step`. Returns its path or key. */
  saveSummary(
    sessionId: string,
    summary: ArchivedSummary,
    step: number,
    options?: ArchiveWriteOptions,
  ): Promise<string>;
  /** Appends one event to the session's event log. */
  saveEvent(sessionId: string, event: AnyCompactEvent, options?: ArchiveWriteOptions): Promise<void>;
  /**
   * Saves the original of a cleared, cut or summarized text under `artifact.ref`, before the
   * request that drops it is sent. Returns its path or key. Optional: without it, placeholders
   * name no reference.
   */
  saveArtifact?(
    sessionId: string,
    artifact: ArchivedArtifact,
    options?: ArchiveWriteOptions,
  ): Promise<string>;
  /**
   * Reads one artifact of `sessionId` back; `undefined` when there is none. Never crosses
   * sessions. One stored under `ref` that cannot be read (corrupt, truncated) throws
   * `corrupt_state` naming the ref (the built-in fs and S3 storages).
   */
  loadArtifact?(sessionId: string, ref: string): Promise<ArchivedArtifact | undefined>;
  /**
   * The highest compaction step (summary version) of `sessionId` whose summary was archived;
   * `undefined` when none was. The manager reads it when it first reads a session it holds no
   * copy of (a new one, or a store that lost its data or holds an older state): versions resume above it, so they
   * never go down. Optional: without it, a store that lost its data is resumed from the
   * processes' own copies and the trusted summary in the history only.
   */
  latestSummaryStep?(sessionId: string): Promise<number | undefined>;
  /** Every artifact of `sessionId`, oldest first (for search). */
  listArtifacts?(sessionId: string): Promise<ArchivedArtifact[]>;
  /** Waits for pending writes and releases resources. */
  close?(): Promise<void>;
}
