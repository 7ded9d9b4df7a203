import type { StorageAdapter } from '../core/archive/storage-adapter.js';
import type { EventExporter } from '../core/events/events.js';
import type { Summarizer } from '../core/summary/summarizer.js';

// The SDK objects below are typed by their shape, not by the SDKs' own types: the config entry
// names no optional peer, so a project without the SDKs type-checks it (with skipLibCheck off,
// tsc's default, an `import('openai')` in these declarations failed to resolve). The SDKs'
// objects fit these shapes; the summarizers check them again where they are used.

/** An `openai` client (`new OpenAI()`), as far as the config's options need to know it. */
export interface OpenAiClientLike {
  chat: { completions: { create: (...args: never[]) => unknown } };
}

/** An `@anthropic-ai/sdk` client (`new Anthropic()`), as far as the config's options need to know it. */
export interface AnthropicClientLike {
  messages: { create: (...args: never[]) => unknown };
}

/** An AI SDK language model (`openai('gpt-4o-mini')`), or a model id string the AI SDK resolves. */
export type AiSdkModelLike =
  | string
  | { readonly specificationVersion: string; readonly provider: string; readonly modelId: string };

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
  aiSdkModel?: AiSdkModelLike;
  /** A client for the `openai` summarizer (e.g. pointed at a proxy): an `OpenAI` instance. */
  openaiClient?: OpenAiClientLike;
  /** A client for the `anthropic` summarizer: an `Anthropic` instance. */
  anthropicClient?: AnthropicClientLike;
  /** Extra exporters added to the configured ones. */
  exporters?: EventExporter[];
  /** A storage adapter to use instead of the configured one. */
  storage?: StorageAdapter;
}
