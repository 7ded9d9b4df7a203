import { CompactError } from '../../core/errors.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import type {
  ArchivedArtifact,
  ArchivedSummary,
  StorageAdapter,
} from '../../core/session/storage-adapter.js';
import { assertArtifact, assertArtifactRef, sortArtifacts } from '../artifact-ref.js';
import { ARCHIVE_NAMES, safeSessionSegment } from '../session-path.js';

/** What a {@link memoryStorage} holds for one session (copies; changing them changes nothing stored). */
export interface MemoryArchiveSession {
  /** Transcripts by compaction step. */
  transcripts: Map<number, unknown[]>;
  /** Summaries by compaction step. */
  summaries: Map<number, ArchivedSummary>;
  events: AnyCompactEvent[];
  /** Artifacts by reference. */
  artifacts: Map<string, ArchivedArtifact>;
}

/** A {@link StorageAdapter} that keeps the archive in this process, with a way to look inside. */
export interface MemoryStorage extends StorageAdapter {
  readonly name: 'memory';
  /** Everything stored for `sessionId` (deep copies), `undefined` when nothing was. */
  snapshot(sessionId: string): MemoryArchiveSession | undefined;
  /** The session ids stored so far. */
  sessions(): string[];
  saveArtifact(sessionId: string, artifact: ArchivedArtifact): Promise<string>;
  loadArtifact(sessionId: string, ref: string): Promise<ArchivedArtifact | undefined>;
  listArtifacts(sessionId: string): Promise<ArchivedArtifact[]>;
}

/**
 * Archives in memory: for tests, short-lived agents and recall without a disk. Everything is
 * copied in and out (`structuredClone`), so neither the caller nor the model can change what
 * was stored. Locations look like the fs layout under `memory://` (`memory://{session}/summary-001.json`).
 * Nothing is ever evicted: the archive lives as long as the adapter.
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
      session = { transcripts: new Map(), summaries: new Map(), events: [], artifacts: new Map() };
      sessions.set(sessionId, session);
    }
    return session;
  };
  const location = (sessionId: string, name: string) => `memory://${safeSessionSegment(sessionId)}/${name}`;

  return {
    name: 'memory',
    async saveTranscript(sessionId, transcript, step) {
      const name = ARCHIVE_NAMES.transcript(step);
      sessionOf(sessionId).transcripts.set(step, structuredClone([...transcript]));
      return location(sessionId, name);
    },
    async saveSummary(sessionId, summary, step) {
      const name = ARCHIVE_NAMES.summary(step);
      sessionOf(sessionId).summaries.set(step, structuredClone(summary));
      return location(sessionId, name);
    },
    async saveEvent(sessionId, event) {
      sessionOf(sessionId).events.push(structuredClone(event));
    },
    async saveArtifact(sessionId, artifact) {
      assertArtifact(sessionId, artifact);
      sessionOf(sessionId).artifacts.set(artifact.ref, structuredClone(artifact));
      return location(sessionId, `artifacts/${artifact.ref}.json`);
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
