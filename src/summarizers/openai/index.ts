export { DEFAULT_SUMMARY_SEED, type OpenAISummarizerOptions, openaiSummarizer } from './openai-summarizer.js';
