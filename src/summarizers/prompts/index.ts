/** The prompts of the LLM summarizers: custom templates and the built-in strategy prompts. */
export type { AgentPrompt } from './build-summary-prompt.js';
export { type PromptTemplate, type PromptTemplateSource, promptTemplate } from './prompt-template.js';
export { DEFAULT_STRATEGY_PROMPTS, SUMMARY_RULES } from './strategy-prompts.js';
