export { type ExportPrivacyOptions, hashSessionId, SESSION_HASH_KEY_ENV } from '../event-utils.js';
export {
  COMPACTION_SPAN_NAME,
  compactionAttributes,
  recordCompaction,
  SUMMARIZER_SPAN_NAME,
} from './compaction-attributes.js';
export { type InstrumentableManager, instrumentManager } from './instrument-manager.js';
export type { OtelOptions } from './otel-api.js';
export { type OtelExporterOptions, otelExporter } from './otel-exporter.js';
export { type OtlpExporterOptions, otlpExporter } from './otlp-exporter.js';
export {
  QUEUE_METRICS,
  type QueueCountsSource,
  type QueueLatencySource,
  type QueueMetricsOptions,
  queueMetrics,
} from './queue-metrics.js';
