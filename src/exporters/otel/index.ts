export { type ExportPrivacyOptions, hashSessionId } from '../event-utils.js';
export {
  COMPACTION_SPAN_NAME,
  compactionAttributes,
  type InstrumentableManager,
  instrumentManager,
  type OtelExporterOptions,
  type OtelOptions,
  otelExporter,
  recordCompaction,
  SUMMARIZER_SPAN_NAME,
} from './otel-exporter.js';
export { type OtlpExporterOptions, otlpExporter } from './otlp-exporter.js';
