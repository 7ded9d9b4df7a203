import type { AnyCompactEvent } from './events.js';

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
 * Archives what compaction is about to remove, so nothing is ever lost: the full
 * transcript before each compaction, each summary, and every event.
 *
 * Everything handed to an adapter has already been redacted. Adapters may throw; the
 * manager turns a failed write into a `compact.error` event and the conversation goes on.
 */
export interface StorageAdapter {
  /** `fs`, `s3`, ... (reported as `storage_adapter` in `compact.archival`). */
  readonly name: string;
  /** Saves the full history (in the caller's format) before compaction `step`. Returns its path or key. */
  saveTranscript(sessionId: string, transcript: readonly unknown[], step: number): Promise<string>;
  /** Saves the summary of compaction `step`. Returns its path or key. */
  saveSummary(sessionId: string, summary: ArchivedSummary, step: number): Promise<string>;
  /** Appends one event to the session's event log. */
  saveEvent(sessionId: string, event: AnyCompactEvent): Promise<void>;
  /** Waits for pending writes and releases resources. */
  close?(): Promise<void>;
}
