import { CompactError } from '../core/errors.js';
import type { AnyCompactEvent, EventExporter } from '../core/events/events.js';
import { callSafely } from './event-utils.js';

/**
 * # The custom exporter contract
 *
 * An exporter is an {@link EventExporter}: `{ name, export(events), forceFlush?, shutdown? }`.
 * The manager hands it batches from a bounded background queue, never on the preflight path.
 * Whatever you write must keep these promises (the shared conformance suite,
 * `describeExporterConformance` in `agent-compaction/testing/conformance`, checks them):
 *
 * 1. `name` is a short non-empty string (it appears in diagnostics).
 * 2. `export(events)` resolves once the batch is sent or given up; it never rejects on
 *    purpose and never throws synchronously. Report failures yourself (stderr with a
 *    `[Name]` prefix), then resolve. The queue stops waiting after `exportTimeoutMs` anyway.
 * 3. It bounds its own time: a network exporter uses a timeout (Ariadne: 2 s, one retry).
 * 4. It never mutates the events it receives (the same objects go to every exporter).
 * 5. It tolerates odd input: empty batches, missing optional fields, very long strings,
 *    any Unicode.
 * 6. Events arrive already redacted; an exporter must not log unredacted data of its own.
 * 7. `forceFlush()` sends anything buffered; `shutdown()` flushes and releases resources, may
 *    be called twice, and `export` after `shutdown` resolves without sending.
 *
 * {@link defineExporter} turns a plain `export` function into an exporter that keeps 2, 5
 * (for throws) and 7 for you.
 */
export interface ExporterDefinition {
  /** A short name for diagnostics. */
  name: string;
  /** Sends a batch; may throw, {@link defineExporter} catches it. */
  export(events: readonly AnyCompactEvent[]): Promise<void> | void;
  /** Flushes anything buffered. */
  forceFlush?(): Promise<void> | void;
  /** Releases resources. */
  shutdown?(): Promise<void> | void;
  /**
   * Called with errors thrown by the functions above.
   * @default a `[name]` line on stderr
   */
  onError?(error: unknown): void;
}

/**
 * Wraps a definition into a contract-keeping {@link EventExporter}: errors are caught and
 * reported, `shutdown` runs once, `export` after `shutdown` is a no-op.
 *
 * @example
 * ```ts
 * const webhook = defineExporter({
 *   name: 'webhook',
 *   async export(events) {
 *     await fetch(url, { method: 'POST', body: JSON.stringify(events), signal: AbortSignal.timeout(2000) });
 *   },
 * });
 * ```
 */
export function defineExporter(definition: ExporterDefinition): EventExporter {
  if (typeof definition.name !== 'string' || definition.name === '') {
    throw new CompactError('invalid_argument', 'defineExporter: name must be a non-empty string', {
      issues: [{ path: ['name'], message: 'must be a non-empty string' }],
    });
  }
  const report =
    definition.onError ??
    ((error: unknown) =>
      void process.stderr.write(`[${definition.name}] ${String((error as Error)?.message ?? error)}\n`));
  const guard = async (run: () => Promise<void> | void) => {
    try {
      await run();
    } catch (error) {
      // Never let the reporter throw (or reject) into the agent loop.
      callSafely(report, error);
    }
  };
  let shutdown: Promise<void> | undefined;
  return {
    name: definition.name,
    export(events) {
      if (shutdown || events.length === 0) return Promise.resolve();
      return guard(() => definition.export(events));
    },
    forceFlush() {
      return guard(() => definition.forceFlush?.());
    },
    shutdown() {
      shutdown ??= guard(async () => {
        await definition.forceFlush?.();
        await definition.shutdown?.();
      });
      return shutdown;
    },
  };
}
