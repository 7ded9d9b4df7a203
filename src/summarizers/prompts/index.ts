export * from './build-summary-prompt.js';
export * from './prompt-template.js';
export * from './strategy-prompts.js';
