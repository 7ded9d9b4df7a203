export {
  DEFAULT_SUMMARY_SEED,
  type OpenAICachedPrefixOptions,
  type OpenAISummarizerOptions,
  openaiSummarizer,
} from './openai-summarizer.js';
