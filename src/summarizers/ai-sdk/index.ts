export { type AiSdkSummarizerOptions, aiSdkSummarizer } from './ai-sdk-summarizer.js';
