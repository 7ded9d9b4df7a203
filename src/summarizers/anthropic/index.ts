export {
  type AnthropicCachedPrefixOptions,
  type AnthropicSummarizerOptions,
  anthropicSummarizer,
} from './anthropic-summarizer.js';
