import type Anthropic from '@anthropic-ai/sdk';
import type { LanguageModel } from 'ai';
import type OpenAI from 'openai';
import { CompactError } from '../core/errors.js';
import { getDefaultRedactor } from '../core/redaction/redactor.js';
import type { Summarizer } from '../core/summary/summarizer.js';
import type { ConfigRuntimeOptions } from './config-runtime-options.js';
import type { CompactConfig } from './config-schema.js';
import { loadDependency } from './load-dependency.js';

/**
 * The configured summarizer. LLM summarizers are wrapped in the failure policy
 * (`resilientSummarizer`: per-attempt timeout within one total budget, halving retries for
 * over-long summaries, one `brief` retry after a refusal, the circuit breaker shared per
 * provider and model).
 */
export async function buildSummarizer(
  config: CompactConfig,
  options: ConfigRuntimeOptions,
): Promise<Summarizer | undefined> {
  if (options.summarizer) return options.summarizer;
  const inner = await buildLlmSummarizer(config, options);
  if (inner === undefined) return undefined;
  const { resilientSummarizer } = await import('../summarizers/resilient-summarizer.js');
  const { timeout_ms: attempt, total_timeout_ms: total } = config.summarizer;
  return resilientSummarizer(inner, { timeoutMs: Math.min(attempt, total), totalTimeoutMs: total });
}

async function buildLlmSummarizer(
  config: CompactConfig,
  options: ConfigRuntimeOptions,
): Promise<Summarizer | undefined> {
  const { summarizer } = config;
  const model = summarizer.model ?? config.model;
  const apiKey = summarizerApiKey(summarizer, options.env ?? process.env);
  const common = commonSummarizerOptions(summarizer);
  switch (summarizer.provider) {
    case 'embedded':
      return undefined;
    case 'openai': {
      const { openaiSummarizer } = await loadDependency(
        'openai summarizer',
        () => import('../summarizers/openai/index.js'),
      );
      return openaiSummarizer({
        model,
        ...common,
        ...(summarizer.seed === undefined ? {} : { seed: summarizer.seed }),
        ...(summarizer.base_url === undefined ? {} : { baseURL: summarizer.base_url }),
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(options.openaiClient === undefined ? {} : { client: options.openaiClient as OpenAI }),
      });
    }
    case 'anthropic': {
      const { anthropicSummarizer } = await loadDependency(
        'anthropic summarizer',
        () => import('../summarizers/anthropic/index.js'),
      );
      return anthropicSummarizer({
        model,
        ...common,
        ...(summarizer.base_url === undefined ? {} : { baseURL: summarizer.base_url }),
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(options.anthropicClient === undefined ? {} : { client: options.anthropicClient as Anthropic }),
      });
    }
    case 'ai-sdk': {
      const aiSdkModel = requireAiSdkModel(options);
      const { aiSdkSummarizer } = await loadDependency(
        'ai-sdk summarizer',
        () => import('../summarizers/ai-sdk/index.js'),
      );
      return aiSdkSummarizer({
        model: aiSdkModel as LanguageModel,
        ...common,
        ...(summarizer.seed === undefined ? {} : { seed: summarizer.seed }),
      });
    }
    case 'llama-cpp': {
      const { llamaCppSummarizer } = await loadDependency(
        'llama-cpp summarizer',
        () => import('../summarizers/llama-cpp/index.js'),
      );
      return llamaCppSummarizer({
        modelPath: model,
        ...common,
        ...(summarizer.seed === undefined ? {} : { seed: summarizer.seed }),
      });
    }
  }
}

type SummarizerConfig = CompactConfig['summarizer'];

/**
 * The key in the environment variable `api_key_env` names, if any; a name that is not set is
 * `invalid_config`. The error names the variable redacted: a key written where its variable's
 * name goes (`api_key_env: gsk_...`, a valid name) would otherwise be printed whole.
 */
function summarizerApiKey(summarizer: SummarizerConfig, env: NodeJS.ProcessEnv): string | undefined {
  const apiKey = summarizer.api_key_env === undefined ? undefined : env[summarizer.api_key_env];
  if (summarizer.api_key_env !== undefined && (apiKey === undefined || apiKey === '')) {
    const name = getDefaultRedactor()(summarizer.api_key_env);
    const hint =
      name === summarizer.api_key_env ? '' : ' (a key, not a name: name the variable that holds the key)';
    throw new CompactError(
      'invalid_config',
      `summarizer.api_key_env names ${name}, which is not set in the environment${hint}`,
      { issues: [{ path: ['summarizer', 'api_key_env'], message: `${name} is not set${hint}` }] },
    );
  }
  return apiKey;
}

/** The options every LLM summarizer takes: the temperature and the prompts set in the config. */
function commonSummarizerOptions(summarizer: SummarizerConfig) {
  const strategies = summarizer.prompts
    ? Object.fromEntries(Object.entries(summarizer.prompts).filter(([, template]) => template !== undefined))
    : undefined;
  return {
    temperature: summarizer.temperature,
    ...(strategies === undefined ? {} : { strategies: strategies as Record<string, string> }),
  };
}

/** The AI SDK model object the `ai-sdk` provider needs (`invalid_config` without it). */
function requireAiSdkModel(options: ConfigRuntimeOptions): NonNullable<ConfigRuntimeOptions['aiSdkModel']> {
  if (options.aiSdkModel === undefined) {
    throw new CompactError(
      'invalid_config',
      'summarizer.provider ai-sdk needs a model object: call toManagerOptions(config, { aiSdkModel })',
      {
        issues: [
          { path: ['summarizer', 'provider'], message: 'ai-sdk needs toManagerOptions({ aiSdkModel })' },
        ],
      },
    );
  }
  return options.aiSdkModel;
}
