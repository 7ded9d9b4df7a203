export {
  DEFAULT_JSONL_OPTIONS,
  eventLine,
  type JsonlExporterOptions,
  jsonlExporter,
} from './jsonl-exporter.js';
