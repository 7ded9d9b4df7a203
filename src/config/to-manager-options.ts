import type { CachePrice } from '../core/counting/session-cost.js';
import { CompactError } from '../core/errors.js';
import type { EventExporter } from '../core/events/events.js';
import type { ExportQueueOptions } from '../core/events/export-queue.js';
import type { AgentCompactorOptions } from '../core/manager/manager-options.js';
import type { CompactPolicy } from '../core/policy.js';
import type { RedactorOptions } from '../core/redaction/redactor.js';
import type { PreparationQueue } from '../core/session/preparation-queue.js';
import type { SessionStore } from '../core/session/session-store.js';
import type { StorageAdapter } from '../core/session/storage-adapter.js';
import type { Summarizer } from '../core/summary/summarizer.js';
import type { CompactConfig } from './config-schema.js';
import { buildPreparationQueue } from './queue-options.js';

/**
 * The manager options a config produces (the subset of the manager's options a file can set),
 * in the manager's camelCase layout.
 */
export interface ConfigManagerOptions {
  model: string;
  maxContextTokens: number;
  policy: Partial<CompactPolicy>;
  /** Absent for the `embedded` provider: the manager's default. */
  summarizer?: Summarizer;
  /** `summarizer.total_timeout_ms`: the total time limit of one summarization, fallback included. */
  summarizerTimeoutMs: number;
  storage?: StorageAdapter;
  exporters: EventExporter[];
  redaction: boolean | RedactorOptions;
  /** `redaction.summarizer_input`, when set. */
  redactSummarizerInput?: boolean;
  /** `background`. */
  background: boolean;
  /** `queue`, when set: the BullMQ preparation queue. */
  preparationQueue?: PreparationQueue;
  /** `preparation_lead`, when set. */
  preparationLead?: 'learned' | 'fixed';
  /** `session_lock`, when set. */
  sessionLock?: boolean | { ttlMs?: number };
  /** `export_queue`, when set. */
  exportQueue?: ExportQueueOptions;
  /** `agents` (their policy overrides and time limits). */
  agents: Record<string, AgentCompactorOptions>;
  /** `sessions.store_timeout_ms`. */
  storeTimeoutMs: number;
  /** `sessions.fail_on_storage_error`. */
  failOnStorageError: boolean;
  /** `sessions.cache_max_bytes`. */
  cacheMaxBytes: number;
  /** `storage.require_archive`. */
  requireArchive: boolean;
  /** `pricing`, when set. */
  pricing?: Record<string, CachePrice>;
  /** `sessions.store: redis`: a Redis session store (absent for memory, the manager's default). */
  store?: SessionStore;
}

/**
 * What {@link toManagerOptions} takes beside the config: what a file cannot hold (clients, model
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

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The keys a config object sets, camelCased (arrays copied); unset keys left out. */
function camelKeys<T>(object: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    if (value !== undefined) out[camel(key)] = Array.isArray(value) ? [...value] : value;
  }
  return out as T;
}

/** The per-agent compactors of a config. */
function toAgents(config: CompactConfig): Record<string, AgentCompactorOptions> {
  const agents: Record<string, AgentCompactorOptions> = {};
  for (const [name, agent] of Object.entries(config.agents)) {
    agents[name] = {
      ...(agent.policy === undefined ? {} : { policy: camelKeys<Partial<CompactPolicy>>(agent.policy) }),
      ...(agent.summarizer_timeout_ms === undefined
        ? {}
        : { summarizerTimeoutMs: agent.summarizer_timeout_ms }),
    };
  }
  return agents;
}

function toSessionLock(lock: CompactConfig['session_lock']): { sessionLock?: boolean | { ttlMs?: number } } {
  if (lock === undefined) return {};
  if (typeof lock === 'boolean') return { sessionLock: lock };
  return { sessionLock: lock.ttl_ms === undefined ? {} : { ttlMs: lock.ttl_ms } };
}

/** The camelCase policy of a config. */
export function toCompactPolicy(config: CompactConfig): Partial<CompactPolicy> {
  const { policy } = config;
  return {
    preset: policy.preset,
    ...(policy.trigger_pct === undefined ? {} : { triggerPct: policy.trigger_pct }),
    ...(policy.hard_cap_buffer === undefined ? {} : { hardCapBuffer: policy.hard_cap_buffer }),
    ...(policy.target_pct === undefined ? {} : { targetPct: policy.target_pct }),
    ...(policy.clear_keep_recent === undefined ? {} : { clearKeepRecent: policy.clear_keep_recent }),
    clearMinTokens: policy.clear_min_tokens,
    ...(policy.cache_aware === undefined ? {} : { cacheAware: policy.cache_aware }),
    ...(policy.cost_trigger === undefined ? {} : { costTrigger: policy.cost_trigger }),
    cacheLifetimeMs: policy.cache_lifetime_ms,
    clearAtLeast: policy.clear_at_least,
    clearExcludeTools: [...policy.clear_exclude_tools],
    shortenArgumentsAbove: policy.shorten_arguments_above,
    shortenArgumentsKeep: policy.shorten_arguments_keep,
    repairInput: policy.repair_input,
    keepRecentTurns: policy.keep_recent_turns,
    keepToolIoPairs: policy.keep_tool_io_pairs,
    rolesNeverPrune: [...policy.roles_never_prune],
    protectedFlag: policy.protected_flag,
    strategy: policy.strategy,
    maxSummaryTokens: policy.max_summary_tokens,
    userTextShare: policy.user_text_share,
    ...(policy.prepare_at_pct === undefined ? {} : { prepareAtPct: policy.prepare_at_pct }),
  };
}

/** The redaction option of a config: `false`, `true` (built-in patterns), or the patterns. */
export function toRedactionOption(config: CompactConfig): boolean | RedactorOptions {
  const { redaction } = config;
  if (!redaction.enabled) return false;
  if (redaction.patterns === undefined && redaction.extra_patterns.length === 0) return true;
  return {
    ...(redaction.patterns === undefined ? {} : { patterns: [...redaction.patterns] }),
    ...(redaction.extra_patterns.length === 0 ? {} : { extraPatterns: [...redaction.extra_patterns] }),
  };
}

/** The configured exporter names, without `none`. */
export function exporterNamesOf(config: CompactConfig): ('console' | 'ariadne' | 'otlp')[] {
  const names = Array.isArray(config.telemetry.exporter)
    ? config.telemetry.exporter
    : [config.telemetry.exporter];
  return [...new Set(names)].filter((name): name is 'console' | 'ariadne' | 'otlp' => name !== 'none');
}

async function load<T>(specifier: string, loader: () => Promise<T>): Promise<T> {
  try {
    return await loader();
  } catch (error) {
    throw new CompactError('missing_dependency', `cannot load ${specifier}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

async function buildExporters(config: CompactConfig): Promise<EventExporter[]> {
  const exporters: EventExporter[] = [];
  const privacy = { hashSessionIds: config.telemetry.hash_session_ids };
  for (const name of exporterNamesOf(config)) {
    if (name === 'console') {
      const { consoleExporter } = await load(
        'console exporter',
        () => import('../exporters/console/index.js'),
      );
      exporters.push(consoleExporter({ format: config.telemetry.console_format, ...privacy }));
    } else if (name === 'ariadne') {
      const { ariadneExporter } = await load(
        'ariadne exporter',
        () => import('../exporters/ariadne/index.js'),
      );
      exporters.push(ariadneExporter({ url: config.telemetry.ariadne_url, ...privacy }));
    } else {
      const { otlpExporter } = await load('otlp exporter', () => import('../exporters/otel/index.js'));
      exporters.push(
        otlpExporter({
          ...privacy,
          ...(config.telemetry.otlp_endpoint === undefined ? {} : { url: config.telemetry.otlp_endpoint }),
        }),
      );
    }
  }
  return exporters;
}

async function buildStorage(config: CompactConfig): Promise<StorageAdapter | undefined> {
  const { storage } = config;
  if (storage.adapter === 'none') return undefined;
  if (storage.adapter === 'fs') {
    const { fsStorage } = await load('fs storage', () => import('../storage/fs/index.js'));
    return fsStorage({ path: storage.path, hashSessionIds: storage.hash_session_ids });
  }
  const { s3Storage } = await load('s3 storage', () => import('../storage/s3/index.js'));
  return s3Storage({
    bucket: storage.bucket!,
    prefix: storage.prefix,
    hashSessionIds: storage.hash_session_ids,
    forcePathStyle: storage.force_path_style,
    ...(storage.region === undefined ? {} : { region: storage.region }),
    ...(storage.kms_key_id === undefined ? {} : { kmsKeyId: storage.kms_key_id }),
    ...(storage.endpoint === undefined ? {} : { endpoint: storage.endpoint }),
  });
}

/**
 * The configured summarizer. LLM summarizers are wrapped in the failure policy
 * (`resilientSummarizer`: per-attempt timeout within one total budget, halving retries for
 * over-long summaries, one `brief` retry after a refusal, the circuit breaker shared per
 * provider and model).
 */
async function buildSummarizer(
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
  const env = options.env ?? process.env;
  const model = summarizer.model ?? config.model;
  const apiKey = summarizer.api_key_env === undefined ? undefined : env[summarizer.api_key_env];
  if (summarizer.api_key_env !== undefined && (apiKey === undefined || apiKey === '')) {
    throw new CompactError(
      'invalid_config',
      `summarizer.api_key_env names ${summarizer.api_key_env}, which is not set in the environment`,
      { issues: [{ path: ['summarizer', 'api_key_env'], message: `${summarizer.api_key_env} is not set` }] },
    );
  }
  const strategies = summarizer.prompts
    ? Object.fromEntries(Object.entries(summarizer.prompts).filter(([, template]) => template !== undefined))
    : undefined;
  const common = {
    temperature: summarizer.temperature,
    ...(strategies === undefined ? {} : { strategies: strategies as Record<string, string> }),
  };
  switch (summarizer.provider) {
    case 'embedded':
      return undefined;
    case 'openai': {
      const { openaiSummarizer } = await load(
        'openai summarizer',
        () => import('../summarizers/openai/index.js'),
      );
      return openaiSummarizer({
        model,
        ...common,
        ...(summarizer.seed === undefined ? {} : { seed: summarizer.seed }),
        ...(summarizer.base_url === undefined ? {} : { baseURL: summarizer.base_url }),
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(options.openaiClient === undefined ? {} : { client: options.openaiClient }),
      });
    }
    case 'anthropic': {
      const { anthropicSummarizer } = await load(
        'anthropic summarizer',
        () => import('../summarizers/anthropic/index.js'),
      );
      return anthropicSummarizer({
        model,
        ...common,
        ...(summarizer.base_url === undefined ? {} : { baseURL: summarizer.base_url }),
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(options.anthropicClient === undefined ? {} : { client: options.anthropicClient }),
      });
    }
    case 'ai-sdk': {
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
      const { aiSdkSummarizer } = await load(
        'ai-sdk summarizer',
        () => import('../summarizers/ai-sdk/index.js'),
      );
      return aiSdkSummarizer({
        model: options.aiSdkModel,
        ...common,
        ...(summarizer.seed === undefined ? {} : { seed: summarizer.seed }),
      });
    }
    case 'llama-cpp': {
      const { llamaCppSummarizer } = await load(
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

/** `sessions.store: redis`: a Redis session store on the URL from `sessions.redis_url_env`. */
async function buildSessionStore(
  config: CompactConfig,
  env: Readonly<Record<string, string | undefined>>,
): Promise<SessionStore | undefined> {
  const { store, redis_url_env: urlEnv, redis_key_prefix: keyPrefix } = config.sessions;
  if (store !== 'redis') return undefined;
  const url = env[urlEnv];
  if (!url) {
    throw new CompactError('invalid_config', `sessions.store is redis but ${urlEnv} is not set`, {
      issues: [{ path: ['sessions', 'redis_url_env'], message: `set ${urlEnv} to the Redis URL` }],
    });
  }
  const { redisSessionStore } = await import('../storage/redis/index.js');
  return redisSessionStore({ url, ...(keyPrefix === undefined ? {} : { keyPrefix }) });
}

/**
 * Turns a validated config into `CompactManager` options: the camelCase policy, and the
 * configured summarizer, exporters and storage built from their factories. Each factory (and
 * its SDK) is imported only when the config uses it.
 *
 * @example
 * ```ts
 * const manager = new CompactManager(await toManagerOptions(await loadConfig({ file: 'compact.yaml' })));
 * ```
 */
export async function toManagerOptions(
  config: CompactConfig,
  options: ConfigRuntimeOptions = {},
): Promise<ConfigManagerOptions> {
  const summarizer = await buildSummarizer(config, options);
  const storage = options.storage ?? (await buildStorage(config));
  const exporters = [...(await buildExporters(config)), ...(options.exporters ?? [])];
  const store = await buildSessionStore(config, options.env ?? process.env);
  const preparationQueue = await buildPreparationQueue(config, options.env ?? process.env);
  return {
    model: config.model,
    maxContextTokens: config.max_context_tokens,
    policy: toCompactPolicy(config),
    // total_timeout_ms bounds the whole summarization (the LLM's attempts and retries, then the
    // embedded fallback); timeout_ms bounds each LLM attempt inside it.
    summarizerTimeoutMs: config.summarizer.total_timeout_ms,
    exporters,
    redaction: toRedactionOption(config),
    storeTimeoutMs: config.sessions.store_timeout_ms,
    failOnStorageError: config.sessions.fail_on_storage_error,
    cacheMaxBytes: config.sessions.cache_max_bytes,
    requireArchive: config.storage.require_archive,
    ...(config.redaction.summarizer_input === undefined
      ? {}
      : { redactSummarizerInput: config.redaction.summarizer_input }),
    ...(summarizer === undefined ? {} : { summarizer }),
    ...(storage === undefined ? {} : { storage }),
    ...(store === undefined ? {} : { store }),
    background: config.background,
    ...(preparationQueue === undefined ? {} : { preparationQueue }),
    ...(config.preparation_lead === undefined ? {} : { preparationLead: config.preparation_lead }),
    ...toSessionLock(config.session_lock),
    ...(config.export_queue === undefined
      ? {}
      : { exportQueue: camelKeys<ExportQueueOptions>(config.export_queue) }),
    agents: toAgents(config),
    ...(config.pricing === undefined ? {} : { pricing: toPricing(config.pricing) }),
  };
}

/** `pricing`, in the manager's camelCase. */
function toPricing(pricing: NonNullable<CompactConfig['pricing']>): Record<string, CachePrice> {
  return Object.fromEntries(
    Object.entries(pricing).map(([prefix, price]) => [
      prefix,
      { cacheRead: price.cache_read, cacheWrite: price.cache_write, output: price.output },
    ]),
  );
}
