export {
  type ConsoleExporterOptions,
  consoleExporter,
  DEFAULT_CONSOLE_OPTIONS,
  formatEventLine,
  type WritableLike,
} from './console-exporter.js';
