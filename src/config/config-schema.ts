import { z } from 'zod';
import { MIN_CONTEXT_TOKENS } from '../core/manager/manager-options.js';
import { DEFAULT_POLICY } from '../core/policy.js';
import { STRATEGY_NAMES } from '../core/summary/summarizer.js';
import { agentSchema, policySchema } from './policy-schema.js';
import { between, got, httpUrl, integer, regexString } from './schema-helpers.js';

/**
 * The configuration schema: the single source of truth for `compact.yaml` / `compact.json`.
 * The TypeScript types, the JSON Schema shipped as `agent-compaction/schema.json` and the
 * configuration reference in `docs/configuration.md` are all derived from it.
 *
 * Keys are snake_case, as in the spec; {@link toManagerOptions} maps them to the manager's
 * camelCase options.
 */

/** The config format version this package writes and reads (the only one so far). */
export const CONFIG_VERSION = 1;

export { agentPolicySchema, agentSchema, policySchema } from './policy-schema.js';

/** Summarizer providers a config file can name. */
export const SUMMARIZER_PROVIDERS = ['embedded', 'openai', 'anthropic', 'ai-sdk', 'llama-cpp'] as const;

/** Event exporters a config file can name. */
export const EXPORTER_NAMES = ['console', 'ariadne', 'otlp', 'none'] as const;

/** Storage adapters a config file can name. */
export const STORAGE_ADAPTERS = ['fs', 's3', 'none'] as const;

/** Output formats of the console exporter. */
export const CONSOLE_FORMATS = ['summary', 'pretty', 'json'] as const;

/** Default Ariadne ingest endpoint (Ariadne listens on 127.0.0.1:5175). */
export const DEFAULT_ARIADNE_URL = 'http://localhost:5175/ingest';

/** Default directory of the filesystem archive. */
export const DEFAULT_STORAGE_PATH = './.compact/archive';
const exporterName = z.enum(EXPORTER_NAMES);

/** `session_lock`: the lock a triggered compaction holds in a shared store. */
export const sessionLockSchema = z
  .union([
    z.boolean(),
    z.strictObject({
      ttl_ms: integer(100)
        .optional()
        .describe('How long a crashed holder can block the others (default 10000).'),
    }),
  ])
  .describe(
    'The session lock of a triggered compaction: true/false, or { ttl_ms }. Default: on for shared stores, off in memory.',
  );

/** `export_queue`: the bounded queue between the manager and its exporters. */
export const exportQueueSchema = z
  .strictObject({
    max_size: integer(1).optional().describe('Events held before the oldest are dropped (default 10000).'),
    max_batch_size: integer(1).optional().describe('Events handed to an exporter at once (default 512).'),
    flush_interval_ms: integer(1)
      .optional()
      .describe('How often queued events are exported, in milliseconds (default 200).'),
    export_timeout_ms: integer(1)
      .optional()
      .describe('Time limit of one export call, in milliseconds (default 30000).'),
  })
  .describe('The bounded queue between the manager and its exporters.');

/** `summarizer.prompts`: prompt templates per strategy. */
export const promptsSchema = z
  .strictObject(
    Object.fromEntries(
      STRATEGY_NAMES.map((name) => [
        name,
        z.string().min(1).optional().describe(`Prompt template of the ${name} strategy.`),
      ]),
    ) as Record<(typeof STRATEGY_NAMES)[number], z.ZodOptional<z.ZodString>>,
  )
  .describe(
    'Prompt templates that replace the built-in ones, by strategy. Placeholders: {max_tokens}, {remainder_messages}.',
  );

/** `summarizer`: who writes the summaries. */
export const summarizerSchema = z
  .strictObject({
    provider: z
      .enum(SUMMARIZER_PROVIDERS)
      .default('embedded')
      .describe(
        'embedded (deterministic, offline), openai, anthropic, ai-sdk (code only) or llama-cpp (local GGUF model).',
      ),
    model: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Summarization model (a model name, or a GGUF path for llama-cpp); defaults to the top-level model.',
      ),
    timeout_ms: integer(1)
      .default(20_000)
      .describe(
        'Time limit of one summarizer attempt (one model request), in milliseconds; attempts also stop when total_timeout_ms is spent.',
      ),
    total_timeout_ms: integer(1)
      .default(30_000)
      .describe(
        'Total time limit of summarizing in one preflight or compaction, in milliseconds: every attempt, retry and retry strategy of the summarizer and the embedded fallback share it; past it the previous summary is kept (pruning only).',
      ),
    base_url: httpUrl.optional().describe('Base URL of the provider API (a proxy or a compatible server).'),
    api_key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be an environment variable name' })
      .optional()
      .describe(
        'Name of the environment variable that holds the API key (keys never go in the file); defaults to the provider SDK convention.',
      ),
    seed: z.int().optional().describe('Sampling seed, for reproducible summaries.'),
    temperature: between(0, 2).default(0).describe('Sampling temperature.'),
    prompts: promptsSchema.optional(),
  })
  .describe('Who writes the summaries.');

/** `telemetry`: where trace events go. */
export const telemetrySchema = z
  .strictObject({
    exporter: z
      .union([exporterName, z.array(exporterName)], {
        error: (issue) =>
          `must be one of ${EXPORTER_NAMES.map((name) => JSON.stringify(name)).join(', ')}, or a list of them (got ${got(issue.input)})`,
      })
      .default('none')
      .describe('Event exporter(s): console, ariadne, otlp or none; a list sends to several.'),
    ariadne_url: httpUrl.default(DEFAULT_ARIADNE_URL).describe("Ariadne's ingest endpoint."),
    console_format: z
      .enum(CONSOLE_FORMATS)
      .default('summary')
      .describe(
        'Console exporter output: summary (one line per compaction, error and warning), pretty (one line per event) or json.',
      ),
    otlp_endpoint: httpUrl
      .optional()
      .describe(
        'OTLP/HTTP traces endpoint; defaults to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or localhost:4318.',
      ),
    hash_session_ids: z
      .boolean()
      .default(false)
      .describe(
        'Exporters send a keyed hash of each session id instead of the id (key: COMPACT_SESSION_HASH_KEY).',
      ),
  })
  .describe('Where trace events go.');

/** `storage`: where transcripts and summaries are archived before pruning. */
export const storageSchema = z
  .strictObject({
    adapter: z.enum(STORAGE_ADAPTERS).default('fs').describe('Archive adapter: fs, s3 or none.'),
    path: z.string().min(1).default(DEFAULT_STORAGE_PATH).describe('Archive directory of the fs adapter.'),
    bucket: z.string().min(1).optional().describe('S3 bucket (required when adapter is s3).'),
    prefix: z.string().default('').describe('S3 key prefix.'),
    region: z.string().min(1).optional().describe('S3 region; defaults to the AWS SDK chain.'),
    kms_key_id: z
      .string()
      .min(1)
      .optional()
      .describe('KMS key id or ARN: objects are written with SSE-KMS under this key.'),
    endpoint: httpUrl.optional().describe('S3-compatible endpoint (MinIO, LocalStack, s3rver).'),
    force_path_style: z
      .boolean()
      .default(false)
      .describe('Use path-style S3 URLs (most S3-compatible servers).'),
    request_timeout_ms: integer(1)
      .max(600_000)
      .optional()
      .describe('Time limit of one S3 request, ms (default 10000).'),
    archive_timeout_ms: integer(1)
      .max(600_000)
      .default(30_000)
      .describe(
        'Time limit of one archive write (transcript, original, summary or event line), in milliseconds: a write that has not settled by then (a hung mount, a stalled server) counts as failed (storage_failed), the call goes on, and the write is aborted (the fs and s3 adapters write nothing more).',
      ),
    hash_session_ids: z
      .boolean()
      .default(false)
      .describe(
        'Name each session folder (or S3 key prefix) by a keyed hash of the session id (key: COMPACT_SESSION_HASH_KEY); folders written before keep their names.',
      ),
    require_archive: z
      .boolean()
      .default(false)
      .describe(
        'Block pruning while the archive cannot be written: a compaction whose originals fail to archive throws storage_failed instead of pruning (for callers that persist the compacted view).',
      ),
  })
  .describe('Where transcripts and summaries are archived before pruning.')
  .superRefine((storage, context) => {
    if (storage.adapter === 's3' && storage.bucket === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['bucket'],
        message: 'is required when storage.adapter is s3',
      });
    }
  });

/** `sessions`: the session store's time limit and fault mode, and the in-memory session cache. */
export const sessionsSchema = z
  .strictObject({
    store: z
      .enum(['memory', 'redis'])
      .default('memory')
      .describe(
        'Where session state lives: memory (one process) or redis (shared by every process serving a session; needs the redis package).',
      ),
    redis_url_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be an environment variable name' })
      .default('REDIS_URL')
      .describe(
        'Name of the environment variable that holds the Redis URL when store is redis (a URL can carry a password: it never goes in the file).',
      ),
    redis_key_prefix: z
      .string()
      .min(1)
      .optional()
      .describe("Prefix of the session keys in Redis (default 'agent-compaction:session:')."),
    redis_close_timeout_ms: integer(0)
      .max(600_000)
      .optional()
      .describe('How long closing the Redis store waits for commands in flight, ms (default 1000).'),
    store_timeout_ms: integer(1)
      .max(600_000)
      .default(500)
      .describe(
        "Time limit of one call's waits on the session store, all its operations together, in milliseconds; a store that fails or takes longer is an outage: calls go on from the in-process state, one compact.error is emitted when it starts and one compact.warning (storage_recovered) when it ends.",
      ),
    fail_on_storage_error: z
      .boolean()
      .default(false)
      .describe('Throw storage_failed when the session store fails, instead of going on without it.'),
    cache_max_bytes: integer(0)
      .default(268_435_456)
      .describe(
        'Cap of the memory the manager keeps per session between calls (approximate bytes); least recently used sessions are forgotten first.',
      ),
  })
  .describe('Session store faults and the in-memory session cache.');

/** `queue`: summaries prepared on a BullMQ job queue by workers (`agent-compaction/queue`). */
export const queueSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .regex(/^[^:]+$/, { error: 'must not contain ":"' })
      .default('agent-compaction-prepare')
      .describe('Name of the queue; the agents and the workers of one fleet use the same.'),
    redis_url_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be an environment variable name' })
      .optional()
      .describe(
        "Name of the environment variable that holds the queue's Redis URL; defaults to sessions.redis_url_env.",
      ),
    attempts: integer(1)
      .max(100)
      .default(3)
      .describe('Runs of one job at most (the first and its retries) before it is dead-lettered.'),
    backoff_ms: integer(0)
      .max(3_600_000)
      .default(1000)
      .describe('Delay before the first retry of a failed job, doubled at each next one, in milliseconds.'),
    concurrency: integer(1)
      .max(1000)
      .default(16)
      .describe(
        'Jobs one worker runs at once (agent-compaction worker). LLM summaries wait on the network, not the CPU: many run at once; bound the provider with rate_limit.',
      ),
    rate_limit: z
      .strictObject({
        max: integer(1).describe('Jobs started at most per duration_ms.'),
        duration_ms: integer(1).describe('The window of the limit, in milliseconds.'),
      })
      .optional()
      .describe(
        "Jobs started at most per window across every worker of the queue (one queue per provider gives a provider's limit).",
      ),
  })
  .describe(
    'Prepare summaries on a BullMQ job queue (needs sessions.store: redis, and the bullmq and ioredis packages); run workers with agent-compaction worker.',
  );

/** `redaction`: secrets removed before anything leaves the process. */
export const redactionSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe('Redact secrets in events, archives and traces (a warning event is emitted when off).'),
    patterns: z
      .array(regexString)
      .optional()
      .describe(
        'Regular expressions that replace the built-in patterns (a leading (?i) makes one case-insensitive).',
      ),
    extra_patterns: z.array(regexString).default([]).describe('Regular expressions added to the patterns.'),
    summarizer_input: z
      .boolean()
      .optional()
      .describe(
        'Also redact the history sent to the summarizer; defaults to true for LLM summarizers and false for the embedded one (which runs in process).',
      ),
  })
  .describe('Secrets removed before anything leaves the process.');

/** The whole configuration file. */
export const compactConfigSchema = z
  .strictObject({
    $schema: z.string().optional().describe('JSON Schema reference, for editors; ignored.'),
    version: z
      .literal(CONFIG_VERSION, {
        error: (issue) =>
          typeof issue.input === 'number' && issue.input > CONFIG_VERSION
            ? `must be ${CONFIG_VERSION} (got ${issue.input}): the file is for a newer agent-compaction`
            : `must be ${CONFIG_VERSION} (got ${got(issue.input)})`,
      })
      .default(CONFIG_VERSION)
      .describe('Config format version.'),
    model: z.string().min(1).default('gpt-4o').describe('The model the agent calls (selects the tokenizer).'),
    max_context_tokens: integer(MIN_CONTEXT_TOKENS)
      .default(128_000)
      .describe("The model's context window, in tokens."),
    policy: policySchema.prefault({}),
    summarizer: summarizerSchema.prefault({}),
    telemetry: telemetrySchema.prefault({}),
    storage: storageSchema.prefault({}),
    redaction: redactionSchema.prefault({}),
    background: z
      .boolean()
      .default(false)
      .describe(
        'Prepare summaries off the critical path from policy.prepare_at_pct, and swap them in at the trigger.',
      ),
    preparation_lead: z
      .enum(['learned', 'fixed'])
      .optional()
      .describe(
        "Where queued preparations (queue) start: 'learned' (default), a lead time ahead of the trigger from the measured queue latency and each session's growth per call; 'fixed', at policy.prepare_at_pct (as in-process preparations always do).",
      ),
    session_lock: sessionLockSchema.optional(),
    queue: queueSchema.optional(),
    export_queue: exportQueueSchema.optional(),
    agents: z
      .record(z.string().min(1), agentSchema)
      .default({})
      .describe(
        'Agents that keep their own compacted view of a shared history, by the name passed as `agent`.',
      ),
    sessions: sessionsSchema.prefault({}),
    pricing: z
      .record(
        z.string().min(1),
        z
          .strictObject({
            cache_read: z.number().min(0).describe('A cached input token read, times the base input price.'),
            cache_write: z
              .number()
              .min(0)
              .describe('An input token written to the cache, times the base input price.'),
            output: z.number().min(0).describe('An output token, times the base input price.'),
          })
          .describe('Price multipliers of one model family.'),
      )
      .optional()
      .describe(
        'Price multipliers by model-name prefix (the longest prefix wins), over the defaults; they price costSnapshot and compact.usage events.',
      ),
  })
  .describe('agent-compaction configuration (compact.yaml)')
  .superRefine((config, context) => {
    const buffer =
      config.policy.hard_cap_buffer ??
      Math.min(DEFAULT_POLICY.hardCapBuffer, Math.floor(config.max_context_tokens * 0.1));
    const budget = config.max_context_tokens - buffer;
    if (budget <= config.policy.max_summary_tokens) {
      context.addIssue({
        code: 'custom',
        path: ['policy', 'hard_cap_buffer'],
        message: `leaves no room: max_context_tokens - hard_cap_buffer (${budget}) must exceed max_summary_tokens (${config.policy.max_summary_tokens})`,
      });
    }
  });

/** A validated configuration, every default applied (what {@link loadConfig} returns). */
export type CompactConfig = z.output<typeof compactConfigSchema>;

/** A configuration as written in a file: every key optional. */
export type CompactConfigInput = z.input<typeof compactConfigSchema>;
