/**
 * The built-in summarizer. Its steps live in `./embedded-summarizer`; this module keeps the
 * public import path.
 */
export { EmbeddedSummarizer } from './embedded/index.js';
