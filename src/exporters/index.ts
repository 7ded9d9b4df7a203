/**
 * `agent-compaction/exporters`: where compaction events go besides in-process listeners.
 * {@link consoleExporter} prints one line per event, {@link jsonlExporter} writes a JSON Lines
 * trace file (rotated by size), {@link ariadneExporter} sends Ariadne Trace Viewer's `/ingest` format, and {@link defineExporter} builds your own; every exporter
 * runs behind the manager's bounded background queue. OpenTelemetry lives in
 * `agent-compaction/otel`.
 *
 * @example
 * ```ts
 * import { CompactManager } from 'agent-compaction';
 * import { ariadneExporter, consoleExporter } from 'agent-compaction/exporters';
 *
 * const manager = new CompactManager({
 *   model: 'gpt-5',
 *   exporters: [consoleExporter(), ariadneExporter({ url: 'http://localhost:5175/ingest' })],
 * });
 * ```
 *
 * @packageDocumentation
 */
export {
  type AriadneExporterOptions,
  type AriadneSpanEvent,
  type AriadneTraceEvent,
  ariadneExporter,
} from './ariadne/index.js';
export { type ConsoleExporterOptions, consoleExporter, type WritableLike } from './console/index.js';
export { defineExporter, type ExporterDefinition } from './define-exporter.js';
export { type ExportPrivacyOptions, hashSessionId, SESSION_HASH_KEY_ENV } from './event-utils.js';
export { DEFAULT_JSONL_OPTIONS, type JsonlExporterOptions, jsonlExporter } from './jsonl/index.js';
