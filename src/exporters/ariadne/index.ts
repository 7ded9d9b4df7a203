export { splitAriadneBatches } from './ariadne-batches.js';
export type { AriadneSpanEvent, AriadneTraceEvent } from './ariadne-event.js';
export {
  type AriadneExporterOptions,
  ariadneExporter,
  DEFAULT_ARIADNE_OPTIONS,
  type ToAriadneSpanOptions,
  toAriadneSpan,
} from './ariadne-exporter.js';
