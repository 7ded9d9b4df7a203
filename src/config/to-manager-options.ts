import type { StorageAdapter } from '../core/archive/storage-adapter.js';
import type { CachePrice } from '../core/counting/session-cost.js';
import { CompactError } from '../core/errors.js';
import type { EventExporter } from '../core/events/events.js';
import type { ExportQueueOptions } from '../core/events/export-queue.js';
import type { AgentCompactorOptions } from '../core/manager/manager-options.js';
import type { CompactPolicy } from '../core/policy.js';
import type { PreparationQueue } from '../core/queues/preparation-queue.js';
import type { RedactorOptions } from '../core/redaction/redactor.js';
import type { SessionStore } from '../core/session/session-store.js';
import type { Summarizer } from '../core/summary/summarizer.js';
import { buildSummarizer } from './build-summarizer.js';
import type { ConfigRuntimeOptions } from './config-runtime-options.js';
import type { CompactConfig } from './config-schema.js';
import { loadDependency } from './load-dependency.js';
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
  /** `storage.archive_timeout_ms`. */
  archiveTimeoutMs: number;
  /** `pricing`, when set. */
  pricing?: Record<string, CachePrice>;
  /** `sessions.store: redis`: a Redis session store (absent for memory, the manager's default). */
  store?: SessionStore;
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

async function buildExporters(config: CompactConfig): Promise<EventExporter[]> {
  const exporters: EventExporter[] = [];
  const privacy = { hashSessionIds: config.telemetry.hash_session_ids };
  for (const name of exporterNamesOf(config)) {
    if (name === 'console') {
      const { consoleExporter } = await loadDependency(
        'console exporter',
        () => import('../exporters/console/index.js'),
      );
      exporters.push(consoleExporter({ format: config.telemetry.console_format, ...privacy }));
    } else if (name === 'ariadne') {
      const { ariadneExporter } = await loadDependency(
        'ariadne exporter',
        () => import('../exporters/ariadne/index.js'),
      );
      exporters.push(ariadneExporter({ url: config.telemetry.ariadne_url, ...privacy }));
    } else {
      const { otlpExporter } = await loadDependency(
        'otlp exporter',
        () => import('../exporters/otel/index.js'),
      );
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
    const { fsStorage } = await loadDependency('fs storage', () => import('../storage/fs/index.js'));
    return fsStorage({ path: storage.path, hashSessionIds: storage.hash_session_ids });
  }
  const { s3Storage } = await loadDependency('s3 storage', () => import('../storage/s3/index.js'));
  return s3Storage({
    bucket: storage.bucket!,
    prefix: storage.prefix,
    hashSessionIds: storage.hash_session_ids,
    forcePathStyle: storage.force_path_style,
    ...(storage.region === undefined ? {} : { region: storage.region }),
    ...(storage.kms_key_id === undefined ? {} : { kmsKeyId: storage.kms_key_id }),
    ...(storage.endpoint === undefined ? {} : { endpoint: storage.endpoint }),
    ...(storage.request_timeout_ms === undefined ? {} : { requestTimeoutMs: storage.request_timeout_ms }),
  });
}

/** `sessions.store: redis`: a Redis session store on the URL from `sessions.redis_url_env`. */
async function buildSessionStore(
  config: CompactConfig,
  env: Readonly<Record<string, string | undefined>>,
): Promise<SessionStore | undefined> {
  const {
    store,
    redis_url_env: urlEnv,
    redis_key_prefix: keyPrefix,
    redis_close_timeout_ms: closeTimeoutMs,
  } = config.sessions;
  if (store !== 'redis') return undefined;
  const url = env[urlEnv];
  if (!url) {
    throw new CompactError('invalid_config', `sessions.store is redis but ${urlEnv} is not set`, {
      issues: [{ path: ['sessions', 'redis_url_env'], message: `set ${urlEnv} to the Redis URL` }],
    });
  }
  const { redisSessionStore } = await import('../storage/redis/index.js');
  return redisSessionStore({
    url,
    ...(keyPrefix === undefined ? {} : { keyPrefix }),
    ...(closeTimeoutMs === undefined ? {} : { closeTimeoutMs }),
  });
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
    archiveTimeoutMs: config.storage.archive_timeout_ms,
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
