export * from './circuit-breaker.js';
export * from './llm-summarizer.js';
export * from './prompts/index.js';
export * from './render-transcript.js';
export * from './resilient-summarizer.js';
