/**
 * Writes the archive of a session through its {@link StorageAdapter}: the full transcript
 * before anything is pruned, the originals of what the cascade cleared, shortened, cut or
 * summarized (under the references placeholders name), each summary, and the events.
 * Everything is redacted first; a failed write never costs the conversation. A failing
 * archive is reported once when it starts failing (`compact.error`, `storage_failed`) and once
 * when a write succeeds again (`compact.warning`, `storage_recovered`, with the number of
 * calls it affected), not on every call; nothing is written on stderr.
 */

import { describeCause } from '../describe-cause.js';
import { CompactError } from '../errors.js';
import { type EventBus, newOperation, type OperationContext } from '../events/event-bus.js';
import type { CompactEventName, CompactEventProperties } from '../events/events.js';
import { type Redactor, redactArchivedText, redactDeep } from '../redaction/redactor.js';
import { type BlockSeam, crossingSeams, redactJoined } from '../redaction/split-secrets.js';
import type { ArchivedArtifact, ArchivedSummary, StorageAdapter } from './storage-adapter.js';

/**
 * An artifact to archive, with the seams of the text blocks its text was joined from (a secret
 * split over two blocks is redacted across them); the seams are not stored.
 */
export type PendingArtifact = Omit<ArchivedArtifact, 'sessionId' | 'createdAt'> & {
  seams?: readonly BlockSeam[];
};

function artifactOnly(artifact: PendingArtifact): Omit<ArchivedArtifact, 'sessionId' | 'createdAt'> {
  const { seams: _seams, ...rest } = artifact;
  return rest;
}

function redactArtifactText(artifact: PendingArtifact, redact: Redactor): string {
  const seams = artifact.seams?.length ? crossingSeams(artifact.seams, redact) : [];
  return redactJoined(artifact.text, seams, redact, (text) => redactArchivedText(text, redact));
}

/** The default time limit of one archive write ({@link SessionArchive}, `archiveTimeoutMs`). */
export const DEFAULT_ARCHIVE_TIMEOUT_MS = 30_000;

/**
 * `write(signal)`, given up after `ms` (a custom adapter or a hung mount whose write never
 * settles): rejects as `storage_failed` and aborts `signal` with that error, so an adapter that
 * honours it stops the write. One that does not lets it run on; if it lands later, it lands
 * under its own name (archive writes never overwrite one another).
 */
export function withArchiveTimeout<T>(
  write: (signal: AbortSignal) => Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new CompactError(
        'storage_failed',
        `${what} did not settle within ${ms} ms (archiveTimeoutMs)`,
      );
      reject(error);
      controller.abort(error);
    }, ms);
    timer.unref?.();
  });
  const run = (async () => write(controller.signal))();
  return Promise.race([run, limit]).finally(() => clearTimeout(timer));
}

/** The manager's archive writer (a no-op without storage). */
export class SessionArchive {
  readonly storage: StorageAdapter | undefined;
  readonly #redact: Redactor | undefined;
  readonly #bus: EventBus;
  readonly #tails = new Map<string, Promise<void>>();
  readonly #pending = new Set<Promise<void>>();
  /** The cause of the last failed write, for errors that name it. */
  lastFailure: string | undefined;
  /** While the archive fails: the calls (operations) it affected, the last one counted. */
  #outage: { affected: number; lastOperation: string } | undefined;
  /** Time limit of one write, in milliseconds. */
  readonly #timeoutMs: number;

  constructor(
    storage: StorageAdapter | undefined,
    redact: Redactor | undefined,
    bus: EventBus,
    timeoutMs: number = DEFAULT_ARCHIVE_TIMEOUT_MS,
  ) {
    this.storage = storage;
    this.#redact = redact;
    this.#bus = bus;
    this.#timeoutMs = timeoutMs;
  }

  /** True when originals can be archived under references (the storage supports artifacts). */
  get keepsArtifacts(): boolean {
    return typeof this.storage?.saveArtifact === 'function';
  }

  async #write(
    context: OperationContext,
    parentId: string | undefined,
    step: number,
    artifact: string,
    write: (signal: AbortSignal) => Promise<string>,
  ): Promise<boolean> {
    const start = Date.now();
    try {
      const location = await withArchiveTimeout(write, this.#timeoutMs, `${artifact} archive write`);
      this.#recovered(context, start, parentId);
      this.#bus.emit(
        context,
        'compact.archival',
        { step, storageAdapter: this.storage!.name, artifact, location },
        { start, ...(parentId ? { parentId } : {}) },
      );
      return true;
    } catch (error) {
      this.lastFailure = `${artifact} archive failed: ${describeCause(error)}`;
      this.#failed(context, this.lastFailure, start, parentId);
      return false;
    }
  }

  /** A failed write: reported when the archive starts failing; later ones are counted. */
  #failed(context: OperationContext, message: string, start: number, parentId?: string): void {
    if (this.#outage) {
      if (this.#outage.lastOperation !== context.operationId) {
        this.#outage.affected++;
        this.#outage.lastOperation = context.operationId;
      }
      return;
    }
    this.#outage = { affected: 1, lastOperation: context.operationId };
    this.#bus.emit(
      context,
      'compact.error',
      {
        errorType: 'storage_failed',
        message: `${message}; further failures are counted until a write succeeds again`,
        fallback: 'continue without archive',
      },
      { start, ...(parentId ? { parentId } : {}) },
    );
  }

  /** A write that succeeded: the end of a failure, if any, is reported once. */
  #recovered(context: OperationContext, start: number, parentId?: string): void {
    const outage = this.#outage;
    if (!outage) return;
    this.#outage = undefined;
    const name = this.storage?.name ?? 'archive';
    this.#bus.emit(
      context,
      'compact.warning',
      {
        code: 'storage_recovered',
        message: `archive "${name}" writes again; ${outage.affected} call(s) went on without it`,
        context: { target: 'archive', name, affectedCalls: outage.affected },
      },
      { start, ...(parentId ? { parentId } : {}) },
    );
  }

  /** Archives the full history before compaction `step`; resolves whether it was written (true without storage). */
  async transcript(
    context: OperationContext,
    messages: readonly unknown[],
    step: number,
    parentId?: string,
  ): Promise<boolean> {
    const storage = this.storage;
    if (!storage) return true;
    const transcript = this.#redact ? redactDeep(messages, this.#redact) : messages;
    return this.#write(context, parentId, step, 'transcript', (signal) =>
      storage.saveTranscript(context.sessionId, transcript, step, { signal }),
    );
  }

  /** Archives originals under their references (redacted), in parallel; resolves the refs written. */
  async artifacts(
    context: OperationContext,
    artifacts: readonly PendingArtifact[],
    parentId?: string,
  ): Promise<Set<string>> {
    const written = new Set<string>();
    const storage = this.storage;
    if (!storage?.saveArtifact || artifacts.length === 0) return written;
    const createdAt = Date.now();
    await Promise.all(
      artifacts.map(async (artifact) => {
        const ok = await this.#write(
          context,
          parentId,
          artifact.step ?? 0,
          `artifact ${artifact.ref}`,
          (signal) =>
            storage.saveArtifact!(
              context.sessionId,
              {
                ...artifactOnly(artifact),
                text: this.#redact ? redactArtifactText(artifact, this.#redact) : artifact.text,
                sessionId: context.sessionId,
                createdAt,
              },
              { signal },
            ),
        );
        if (ok) written.add(artifact.ref);
      }),
    );
    return written;
  }

  /** Archives a summary. */
  async summary(context: OperationContext, summary: ArchivedSummary, parentId?: string): Promise<void> {
    const storage = this.storage;
    if (!storage) return;
    const { sessionId, ...rest } = summary;
    // Session ids are identifiers, not secrets: redaction must not replace them.
    const redacted = this.#redact ? { sessionId, ...redactDeep(rest, this.#redact) } : summary;
    await this.#write(context, parentId, summary.step, 'summary', (signal) =>
      storage.saveSummary(sessionId, redacted, summary.step, { signal }),
    );
  }

  /** Emits one event outside a compaction and archives it with the session's events. */
  emitArchived<N extends CompactEventName>(
    sessionId: string,
    name: N,
    properties: CompactEventProperties[N],
  ): void {
    const context = { ...newOperation(sessionId), archived: [] };
    this.#bus.emit(context, name, properties, { start: Date.now() });
    this.trackEvents(context);
  }

  /**
   * Writes the operation's events in the background, after the session's earlier writes
   * (so lines never interleave); {@link flush} waits for them.
   */
  trackEvents(context: OperationContext): void {
    const events = context.archived;
    context.archived = undefined;
    const storage = this.storage;
    if (!storage || !events || events.length === 0) return;
    const { sessionId } = context;
    // Reported (once per failure) outside the operation: those events are not archived again.
    const own: OperationContext = { ...context, archived: undefined, held: undefined };
    const write = async () => {
      for (const event of events) {
        const start = Date.now();
        try {
          await withArchiveTimeout(
            (signal) => storage.saveEvent(sessionId, event, { signal }),
            this.#timeoutMs,
            'event archive write',
          );
          this.#recovered(own, start);
        } catch (error) {
          this.#failed(own, `event archive failed: ${describeCause(error)}`, start);
          return;
        }
      }
    };
    const next = (this.#tails.get(sessionId) ?? Promise.resolve()).then(write);
    this.#tails.set(sessionId, next);
    this.#pending.add(next);
    void next.finally(() => {
      this.#pending.delete(next);
      if (this.#tails.get(sessionId) === next) this.#tails.delete(sessionId);
    });
  }

  /** Waits for pending event writes. */
  async flush(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  /**
   * Flushes and closes the storage. A close that does not settle within the write time limit
   * (an adapter waiting for a write stuck on a hung mount) is given up, so `shutdown()`
   * returns: its cause is kept in {@link lastFailure}. A close that fails still throws.
   */
  async close(): Promise<void> {
    await this.flush();
    const storage = this.storage;
    if (!storage?.close) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<'given up'>((resolve) => {
      timer = setTimeout(() => resolve('given up'), this.#timeoutMs);
      timer.unref?.();
    });
    try {
      const outcome = await Promise.race([storage.close().then(() => 'closed' as const), limit]);
      if (outcome === 'given up')
        this.lastFailure = `archive close did not settle within ${this.#timeoutMs} ms (archiveTimeoutMs); given up`;
    } finally {
      clearTimeout(timer);
    }
  }
}
