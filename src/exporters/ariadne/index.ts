export {
  type AriadneExporterOptions,
  type AriadneSpanEvent,
  type AriadneTraceEvent,
  ariadneExporter,
  DEFAULT_ARIADNE_OPTIONS,
  splitAriadneBatches,
  type ToAriadneSpanOptions,
  toAriadneSpan,
} from './ariadne-exporter.js';
