import { CompactError, type CompactIssue } from '../core/errors.js';

/** How an environment variable's text is read. */
export type EnvValueType = 'string' | 'number' | 'integer' | 'boolean' | 'list';

/** One environment variable that overrides one config setting. */
export interface EnvOverride {
  /** The variable, e.g. `COMPACT_TRIGGER_PCT`. */
  variable: string;
  /** The config key it overrides, e.g. `['policy', 'trigger_pct']`. */
  path: readonly string[];
  /** How its text is parsed. A `list` is comma-separated. */
  type: EnvValueType;
}

/**
 * Every environment override, one per scalar setting (plus the comma-separated lists
 * `roles_never_prune` and `exporter`). Environment beats the file, which beats the defaults.
 * An empty variable counts as unset.
 */
export const ENV_OVERRIDES: readonly EnvOverride[] = [
  { variable: 'COMPACT_MODEL', path: ['model'], type: 'string' },
  { variable: 'COMPACT_MAX_CONTEXT_TOKENS', path: ['max_context_tokens'], type: 'integer' },
  { variable: 'COMPACT_PRESET', path: ['policy', 'preset'], type: 'string' },
  { variable: 'COMPACT_TRIGGER_PCT', path: ['policy', 'trigger_pct'], type: 'number' },
  { variable: 'COMPACT_HARD_CAP_BUFFER', path: ['policy', 'hard_cap_buffer'], type: 'integer' },
  { variable: 'COMPACT_KEEP_RECENT_TURNS', path: ['policy', 'keep_recent_turns'], type: 'integer' },
  { variable: 'COMPACT_KEEP_TOOL_IO_PAIRS', path: ['policy', 'keep_tool_io_pairs'], type: 'integer' },
  { variable: 'COMPACT_ROLES_NEVER_PRUNE', path: ['policy', 'roles_never_prune'], type: 'list' },
  { variable: 'COMPACT_PROTECTED_FLAG', path: ['policy', 'protected_flag'], type: 'string' },
  { variable: 'COMPACT_STRATEGY', path: ['policy', 'strategy'], type: 'string' },
  { variable: 'COMPACT_MAX_SUMMARY_TOKENS', path: ['policy', 'max_summary_tokens'], type: 'integer' },
  { variable: 'COMPACT_TARGET_PCT', path: ['policy', 'target_pct'], type: 'number' },
  { variable: 'COMPACT_CLEAR_KEEP_RECENT', path: ['policy', 'clear_keep_recent'], type: 'integer' },
  { variable: 'COMPACT_CLEAR_MIN_TOKENS', path: ['policy', 'clear_min_tokens'], type: 'integer' },
  { variable: 'COMPACT_CACHE_AWARE', path: ['policy', 'cache_aware'], type: 'boolean' },
  { variable: 'COMPACT_COST_TRIGGER', path: ['policy', 'cost_trigger'], type: 'boolean' },
  { variable: 'COMPACT_CACHE_LIFETIME_MS', path: ['policy', 'cache_lifetime_ms'], type: 'integer' },
  { variable: 'COMPACT_CLEAR_AT_LEAST', path: ['policy', 'clear_at_least'], type: 'integer' },
  { variable: 'COMPACT_CLEAR_EXCLUDE_TOOLS', path: ['policy', 'clear_exclude_tools'], type: 'list' },
  {
    variable: 'COMPACT_SHORTEN_ARGUMENTS_ABOVE',
    path: ['policy', 'shorten_arguments_above'],
    type: 'integer',
  },
  { variable: 'COMPACT_SHORTEN_ARGUMENTS_KEEP', path: ['policy', 'shorten_arguments_keep'], type: 'integer' },
  { variable: 'COMPACT_REPAIR_INPUT', path: ['policy', 'repair_input'], type: 'boolean' },
  { variable: 'COMPACT_PREPARE_AT_PCT', path: ['policy', 'prepare_at_pct'], type: 'number' },
  { variable: 'COMPACT_SUMMARIZER', path: ['summarizer', 'provider'], type: 'string' },
  { variable: 'COMPACT_SUMMARIZER_MODEL', path: ['summarizer', 'model'], type: 'string' },
  { variable: 'COMPACT_SUMMARIZER_TIMEOUT_MS', path: ['summarizer', 'timeout_ms'], type: 'integer' },
  {
    variable: 'COMPACT_SUMMARIZER_TOTAL_TIMEOUT_MS',
    path: ['summarizer', 'total_timeout_ms'],
    type: 'integer',
  },
  { variable: 'COMPACT_SUMMARIZER_BASE_URL', path: ['summarizer', 'base_url'], type: 'string' },
  { variable: 'COMPACT_SUMMARIZER_API_KEY_ENV', path: ['summarizer', 'api_key_env'], type: 'string' },
  { variable: 'COMPACT_SUMMARIZER_SEED', path: ['summarizer', 'seed'], type: 'integer' },
  { variable: 'COMPACT_SUMMARIZER_TEMPERATURE', path: ['summarizer', 'temperature'], type: 'number' },
  { variable: 'COMPACT_EXPORTER', path: ['telemetry', 'exporter'], type: 'list' },
  { variable: 'COMPACT_ARIADNE_URL', path: ['telemetry', 'ariadne_url'], type: 'string' },
  { variable: 'COMPACT_HASH_SESSION_IDS', path: ['telemetry', 'hash_session_ids'], type: 'boolean' },
  { variable: 'COMPACT_CONSOLE_FORMAT', path: ['telemetry', 'console_format'], type: 'string' },
  { variable: 'COMPACT_OTLP_ENDPOINT', path: ['telemetry', 'otlp_endpoint'], type: 'string' },
  { variable: 'COMPACT_STORAGE', path: ['storage', 'adapter'], type: 'string' },
  { variable: 'COMPACT_STORAGE_PATH', path: ['storage', 'path'], type: 'string' },
  { variable: 'COMPACT_S3_BUCKET', path: ['storage', 'bucket'], type: 'string' },
  { variable: 'COMPACT_S3_PREFIX', path: ['storage', 'prefix'], type: 'string' },
  { variable: 'COMPACT_S3_REGION', path: ['storage', 'region'], type: 'string' },
  { variable: 'COMPACT_S3_KMS_KEY_ID', path: ['storage', 'kms_key_id'], type: 'string' },
  { variable: 'COMPACT_S3_ENDPOINT', path: ['storage', 'endpoint'], type: 'string' },
  { variable: 'COMPACT_S3_FORCE_PATH_STYLE', path: ['storage', 'force_path_style'], type: 'boolean' },
  { variable: 'COMPACT_BACKGROUND', path: ['background'], type: 'boolean' },
  { variable: 'COMPACT_PREPARATION_LEAD', path: ['preparation_lead'], type: 'string' },
  { variable: 'COMPACT_USER_TEXT_SHARE', path: ['policy', 'user_text_share'], type: 'number' },
  { variable: 'COMPACT_EXPORT_QUEUE_MAX_SIZE', path: ['export_queue', 'max_size'], type: 'integer' },
  {
    variable: 'COMPACT_EXPORT_QUEUE_MAX_BATCH_SIZE',
    path: ['export_queue', 'max_batch_size'],
    type: 'integer',
  },
  {
    variable: 'COMPACT_EXPORT_QUEUE_FLUSH_INTERVAL_MS',
    path: ['export_queue', 'flush_interval_ms'],
    type: 'integer',
  },
  {
    variable: 'COMPACT_EXPORT_QUEUE_EXPORT_TIMEOUT_MS',
    path: ['export_queue', 'export_timeout_ms'],
    type: 'integer',
  },
  { variable: 'COMPACT_REQUIRE_ARCHIVE', path: ['storage', 'require_archive'], type: 'boolean' },
  { variable: 'COMPACT_ARCHIVE_TIMEOUT_MS', path: ['storage', 'archive_timeout_ms'], type: 'integer' },
  { variable: 'COMPACT_S3_REQUEST_TIMEOUT_MS', path: ['storage', 'request_timeout_ms'], type: 'integer' },
  { variable: 'COMPACT_HASH_SESSION_FOLDERS', path: ['storage', 'hash_session_ids'], type: 'boolean' },
  { variable: 'COMPACT_SESSION_STORE', path: ['sessions', 'store'], type: 'string' },
  { variable: 'COMPACT_REDIS_URL_ENV', path: ['sessions', 'redis_url_env'], type: 'string' },
  { variable: 'COMPACT_REDIS_KEY_PREFIX', path: ['sessions', 'redis_key_prefix'], type: 'string' },
  { variable: 'COMPACT_STORE_TIMEOUT_MS', path: ['sessions', 'store_timeout_ms'], type: 'integer' },
  {
    variable: 'COMPACT_REDIS_CLOSE_TIMEOUT_MS',
    path: ['sessions', 'redis_close_timeout_ms'],
    type: 'integer',
  },
  {
    variable: 'COMPACT_FAIL_ON_STORAGE_ERROR',
    path: ['sessions', 'fail_on_storage_error'],
    type: 'boolean',
  },
  { variable: 'COMPACT_CACHE_MAX_BYTES', path: ['sessions', 'cache_max_bytes'], type: 'integer' },
  { variable: 'COMPACT_QUEUE_NAME', path: ['queue', 'name'], type: 'string' },
  { variable: 'COMPACT_QUEUE_REDIS_URL_ENV', path: ['queue', 'redis_url_env'], type: 'string' },
  { variable: 'COMPACT_QUEUE_ATTEMPTS', path: ['queue', 'attempts'], type: 'integer' },
  { variable: 'COMPACT_QUEUE_BACKOFF_MS', path: ['queue', 'backoff_ms'], type: 'integer' },
  { variable: 'COMPACT_QUEUE_CONCURRENCY', path: ['queue', 'concurrency'], type: 'integer' },
  { variable: 'COMPACT_QUEUE_RATE_LIMIT_MAX', path: ['queue', 'rate_limit', 'max'], type: 'integer' },
  {
    variable: 'COMPACT_QUEUE_RATE_LIMIT_DURATION_MS',
    path: ['queue', 'rate_limit', 'duration_ms'],
    type: 'integer',
  },
  { variable: 'COMPACT_REDACTION', path: ['redaction', 'enabled'], type: 'boolean' },
  {
    variable: 'COMPACT_REDACT_SUMMARIZER_INPUT',
    path: ['redaction', 'summarizer_input'],
    type: 'boolean',
  },
];

/** The variable that names the config file when `loadConfig` is given none. */
export const CONFIG_FILE_ENV = 'COMPACT_CONFIG';

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

function parseEnvValue(override: EnvOverride, text: string): unknown {
  const trimmed = text.trim();
  switch (override.type) {
    case 'string':
      return trimmed;
    case 'list':
      return trimmed
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part !== '');
    case 'boolean': {
      const word = trimmed.toLowerCase();
      if (TRUE_WORDS.has(word)) return true;
      if (FALSE_WORDS.has(word)) return false;
      throw new Error('must be true or false (also 1/0, yes/no, on/off)');
    }
    case 'number':
    case 'integer': {
      const value = Number(trimmed);
      if (trimmed === '' || !Number.isFinite(value)) throw new Error(`must be a number`);
      if (override.type === 'integer' && !Number.isInteger(value)) throw new Error('must be an integer');
      return value;
    }
  }
}

/** Result of {@link readEnvOverrides}. */
export interface EnvOverridesResult {
  /** The overrides as a partial config object (snake_case). */
  values: Record<string, unknown>;
  /** Which variable set which path (dotted), to name it in validation errors. */
  origins: Map<string, string>;
}

/**
 * Reads every `COMPACT_*` override from `env` into a partial config. A value that cannot be
 * parsed is an `invalid_config` error naming the variable.
 */
export function readEnvOverrides(env: Readonly<Record<string, string | undefined>>): EnvOverridesResult {
  const values: Record<string, unknown> = {};
  const origins = new Map<string, string>();
  const issues: CompactIssue[] = [];
  const messages: string[] = [];
  for (const override of ENV_OVERRIDES) {
    const text = env[override.variable];
    if (text === undefined || text.trim() === '') continue;
    let value: unknown;
    try {
      value = parseEnvValue(override, text);
    } catch (error) {
      const problem = `${(error as Error).message} (got ${JSON.stringify(text)})`;
      issues.push({ path: [override.variable], message: problem });
      messages.push(`${override.variable} ${problem}`);
      continue;
    }
    let target = values;
    for (const key of override.path.slice(0, -1)) {
      target[key] ??= {};
      target = target[key] as Record<string, unknown>;
    }
    target[override.path.at(-1)!] = value;
    origins.set(override.path.join('.'), override.variable);
  }
  if (issues.length > 0) {
    throw new CompactError('invalid_config', `Invalid environment: ${messages.join('; ')}`, { issues });
  }
  return { values, origins };
}
