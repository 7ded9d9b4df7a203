/**
 * Writes the archive of a session through its {@link StorageAdapter}: the full transcript
 * before anything is pruned, the originals of what the cascade cleared, shortened, cut or
 * summarized (under the references placeholders name), each summary, and the events.
 * Everything is redacted first; a failed write is a `compact.error` event and the
 * conversation goes on.
 */
import { type EventBus, newOperation, type OperationContext } from '../events/event-bus.js';
import type { CompactEventName, CompactEventProperties } from '../events/events.js';
import { type Redactor, redactArchivedText, redactDeep } from '../redaction/redactor.js';
import { describeCause } from './fail-open-store.js';
import type { ArchivedArtifact, ArchivedSummary, StorageAdapter } from './storage-adapter.js';

/** The manager's archive writer (a no-op without storage). */
export class SessionArchive {
  readonly storage: StorageAdapter | undefined;
  readonly #redact: Redactor | undefined;
  readonly #bus: EventBus;
  readonly #tails = new Map<string, Promise<void>>();
  readonly #pending = new Set<Promise<void>>();
  /** The cause of the last failed write, for errors that name it. */
  lastFailure: string | undefined;

  constructor(storage: StorageAdapter | undefined, redact: Redactor | undefined, bus: EventBus) {
    this.storage = storage;
    this.#redact = redact;
    this.#bus = bus;
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
    write: () => Promise<string>,
  ): Promise<boolean> {
    const start = Date.now();
    try {
      const location = await write();
      this.#bus.emit(
        context,
        'compact.archival',
        { step, storageAdapter: this.storage!.name, artifact, location },
        { start, ...(parentId ? { parentId } : {}) },
      );
      return true;
    } catch (error) {
      this.lastFailure = `${artifact} archive failed: ${describeCause(error)}`;
      this.#bus.emit(
        context,
        'compact.error',
        {
          errorType: 'storage_failed',
          message: this.lastFailure,
          fallback: 'continue without archive',
        },
        { start, ...(parentId ? { parentId } : {}) },
      );
      return false;
    }
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
    return this.#write(context, parentId, step, 'transcript', () =>
      storage.saveTranscript(context.sessionId, transcript, step),
    );
  }

  /** Archives originals under their references (redacted), in parallel; resolves the refs written. */
  async artifacts(
    context: OperationContext,
    artifacts: readonly Omit<ArchivedArtifact, 'sessionId' | 'createdAt'>[],
    parentId?: string,
  ): Promise<Set<string>> {
    const written = new Set<string>();
    const storage = this.storage;
    if (!storage?.saveArtifact || artifacts.length === 0) return written;
    const createdAt = Date.now();
    await Promise.all(
      artifacts.map(async (artifact) => {
        const ok = await this.#write(context, parentId, artifact.step ?? 0, `artifact ${artifact.ref}`, () =>
          storage.saveArtifact!(context.sessionId, {
            ...artifact,
            text: this.#redact ? redactArchivedText(artifact.text, this.#redact) : artifact.text,
            sessionId: context.sessionId,
            createdAt,
          }),
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
    await this.#write(context, parentId, summary.step, 'summary', () =>
      storage.saveSummary(sessionId, redacted, summary.step),
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
    const write = async () => {
      for (const event of events) {
        try {
          await storage.saveEvent(sessionId, event);
        } catch (error) {
          process.stderr.write(
            `[agent-compaction] event archive failed: ${error instanceof Error ? error.message : String(error)}\n`,
          );
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

  /** Flushes and closes the storage. */
  async close(): Promise<void> {
    await this.flush();
    await this.storage?.close?.();
  }
}
