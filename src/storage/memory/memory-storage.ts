import type {
  ArchivedArtifact,
  ArchivedSummary,
  ArchiveWriteOptions,
  StorageAdapter,
} from '../../core/archive/storage-adapter.js';
import { CompactError } from '../../core/errors.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { artifactFileName, assertArtifact, assertArtifactRef, sortArtifacts } from '../artifact-ref.js';
import { ARCHIVE_NAMES, archiveWriteId, highestSummaryStep, safeSessionSegment } from '../session-path.js';
import { assertWriteNotAborted } from '../write-signal.js';

/** What a {@link memoryStorage} holds for one session (copies; changing them changes nothing stored). */
export interface MemoryArchiveSession {
  /**
   * Transcripts (each whole) by the name of their write (`transcript-pre-compact-001-{id}.jsonl`,
   * the fs layout's names; in write order). Nothing is replaced: every write has its own name.
   */
  transcripts: Map<string, unknown[]>;
  /** Summaries by the name of their write (`summary-001-{id}.json`), in write order. */
  summaries: Map<string, ArchivedSummary>;
  events: AnyCompactEvent[];
  /** Artifacts by reference (the newest write of each). */
  artifacts: Map<string, ArchivedArtifact>;
  /** Artifacts a later write under the same reference superseded, oldest first (kept, never dropped). */
  superseded: ArchivedArtifact[];
}

/** A {@link StorageAdapter} that keeps the archive in this process, with a way to look inside. */
export interface MemoryStorage extends StorageAdapter {
  readonly name: 'memory';
  /** Everything stored for `sessionId` (deep copies), `undefined` when nothing was. */
  snapshot(sessionId: string): MemoryArchiveSession | undefined;
  /** The session ids stored so far. */
  sessions(): string[];
  saveArtifact(sessionId: string, artifact: ArchivedArtifact, options?: ArchiveWriteOptions): Promise<string>;
  loadArtifact(sessionId: string, ref: string): Promise<ArchivedArtifact | undefined>;
  listArtifacts(sessionId: string): Promise<ArchivedArtifact[]>;
}

/**
 * Archives in memory: for tests, short-lived agents and recall without a disk. Everything is
 * copied in and out (`structuredClone`), so neither the caller nor the model can change what
 * was stored. Locations look like the fs layout under `memory://` (`memory://{session}/summary-001-{id}.json`);
 * every write has its own, as on disk (transcripts are kept whole, not as parts).
 * Nothing is ever evicted: the archive lives as long as the adapter. A write whose `signal` is
 * aborted stores nothing.
 *
 * @example
 * ```ts
 * const storage = memoryStorage();
 * const manager = new CompactManager({ model: 'gpt-4o', storage });
 * ```
 */
export function memoryStorage(): MemoryStorage {
  const sessions = new Map<string, MemoryArchiveSession>();
  const sessionOf = (sessionId: string): MemoryArchiveSession => {
    if (typeof sessionId !== 'string') throw new CompactError('storage_failed', 'sessionId must be a string');
    let session = sessions.get(sessionId);
    if (!session) {
      session = {
        transcripts: new Map(),
        summaries: new Map(),
        events: [],
        artifacts: new Map(),
        superseded: [],
      };
      sessions.set(sessionId, session);
    }
    return session;
  };
  const location = (sessionId: string, name: string) => `memory://${safeSessionSegment(sessionId)}/${name}`;

  return {
    name: 'memory',
    async saveTranscript(sessionId, transcript, step, options) {
      assertWriteNotAborted(options?.signal, 'memory');
      const name = ARCHIVE_NAMES.transcript(step, archiveWriteId());
      sessionOf(sessionId).transcripts.set(name, structuredClone([...transcript]));
      return location(sessionId, name);
    },
    async saveSummary(sessionId, summary, step, options) {
      assertWriteNotAborted(options?.signal, 'memory');
      const name = ARCHIVE_NAMES.summary(step, archiveWriteId());
      sessionOf(sessionId).summaries.set(name, structuredClone(summary));
      return location(sessionId, name);
    },
    async latestSummaryStep(sessionId) {
      return highestSummaryStep(sessions.get(sessionId)?.summaries.keys() ?? []);
    },
    async saveEvent(sessionId, event, options) {
      assertWriteNotAborted(options?.signal, 'memory');
      sessionOf(sessionId).events.push(structuredClone(event));
    },
    async saveArtifact(sessionId, artifact, options) {
      assertWriteNotAborted(options?.signal, 'memory');
      assertArtifact(sessionId, artifact);
      const session = sessionOf(sessionId);
      const earlier = session.artifacts.get(artifact.ref);
      if (earlier) session.superseded.push(earlier);
      session.artifacts.set(artifact.ref, structuredClone(artifact));
      return location(sessionId, `artifacts/${artifactFileName(artifact.ref, archiveWriteId())}`);
    },
    async loadArtifact(sessionId, ref) {
      assertArtifactRef(ref);
      const artifact = sessions.get(sessionId)?.artifacts.get(ref);
      return artifact ? structuredClone(artifact) : undefined;
    },
    async listArtifacts(sessionId) {
      const stored = sessions.get(sessionId)?.artifacts.values() ?? [];
      return sortArtifacts([...stored].map((artifact) => structuredClone(artifact)));
    },
    snapshot(sessionId) {
      const session = sessions.get(sessionId);
      return session ? structuredClone(session) : undefined;
    },
    sessions() {
      return [...sessions.keys()];
    },
  };
}
