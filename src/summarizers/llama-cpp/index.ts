export {
  DEFAULT_LLAMA_CONTEXT_SIZE,
  isUsableSummary,
  type LlamaCppSummarizer,
  type LlamaCppSummarizerOptions,
  llamaCppSummarizer,
} from './llama-cpp-summarizer.js';
