/**
 * `agent-compaction/summarizers`: the building blocks of LLM summarizers. The ready-made ones
 * live beside it (`/summarizers/openai`, `/anthropic`, `/ai-sdk`, `/llama-cpp`); this entry
 * holds the failure policy ({@link resilientSummarizer}), {@link createLlmSummarizer} for
 * any other model API, prompt templates, the transcript renderer, the output guard and the
 * process-wide circuit breaker.
 *
 * @example
 * ```ts
 * import { CompactManager } from 'agent-compaction';
 * import { resilientSummarizer } from 'agent-compaction/summarizers';
 * import { openaiSummarizer } from 'agent-compaction/summarizers/openai';
 *
 * const summarizer = resilientSummarizer(openaiSummarizer({ model: 'gpt-4.1-mini', seed: 42, temperature: 0 }));
 * const manager = new CompactManager({ model: 'gpt-5', summarizer });
 * ```
 *
 * @packageDocumentation
 */
export {
  checkSummaryOutput,
  defuseSummaryMarkup,
  type SummaryCheck,
  type SummaryCheckOptions,
  SummaryRejectedError,
  type SummaryRejection,
} from '../core/summary/summary-guard.js';
export {
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitEvent,
  type CircuitSharedState,
  type CircuitSnapshot,
  type CircuitState,
  type CircuitTransition,
  circuitBreakerFor,
  DEFAULT_CIRCUIT_BREAKER,
  onCircuitEvent,
  resetCircuitBreakers,
} from './circuit-breaker.js';
export {
  type CompleteFunction,
  type CompletionRequest,
  type CompletionResult,
  createLlmSummarizer,
  type LlmSummarizerOptions,
} from './llm-summarizer.js';
export {
  type AgentPrompt,
  DEFAULT_STRATEGY_PROMPTS,
  type PromptTemplate,
  type PromptTemplateSource,
  promptTemplate,
  SUMMARY_RULES,
} from './prompts/index.js';
export { type RenderTranscriptOptions, renderTranscript } from './render-transcript.js';
export {
  type ResilientSummarizer,
  type ResilientSummarizerOptions,
  resilientSummarizer,
} from './resilient-summarizer.js';
