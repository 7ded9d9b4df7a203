import type { StorageAdapter } from '../core/archive/storage-adapter.js';
import type { EventExporter } from '../core/events/events.js';
import type { Summarizer } from '../core/summary/summarizer.js';

/**
 * What `toManagerOptions` takes beside the config: what a file cannot hold (clients, model
 * objects, extra exporters) and the environment the API keys are read from.
 */
export interface ConfigRuntimeOptions {
  /**
   * Environment used to read the summarizer's API key (`summarizer.api_key_env`).
   * @default process.env
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** A summarizer to use instead of the configured provider (tests, custom providers). */
  summarizer?: Summarizer;
  /**
   * The AI SDK language model, required when `summarizer.provider` is `ai-sdk` (a model object
   * cannot be written in a file).
   */
  aiSdkModel?: import('ai').LanguageModel;
  /** A client for the `openai` summarizer (e.g. pointed at a proxy). */
  openaiClient?: import('openai').default;
  /** A client for the `anthropic` summarizer. */
  anthropicClient?: import('@anthropic-ai/sdk').default;
  /** Extra exporters added to the configured ones. */
  exporters?: EventExporter[];
  /** A storage adapter to use instead of the configured one. */
  storage?: StorageAdapter;
}
