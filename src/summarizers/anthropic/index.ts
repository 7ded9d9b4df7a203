export { type AnthropicSummarizerOptions, anthropicSummarizer } from './anthropic-summarizer.js';
