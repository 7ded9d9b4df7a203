import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CompactError, isCompactError } from '../core/errors.js';
import { CompactManager } from '../core/manager/compact-manager.js';
import { DEFAULT_POLICY } from '../core/policy.js';
import { closestMatch, levenshtein } from './config-issues.js';
import { ENV_OVERRIDES, readEnvOverrides } from './env-overrides.js';
import { loadConfig, parseConfigText, resolveConfig } from './load-config.js';
import { toManagerOptions } from './to-manager-options.js';

const FIXTURES = join(import.meta.dirname, '../../test/fixtures/config');

function configError(run: () => unknown): CompactError {
  try {
    run();
  } catch (error) {
    if (isCompactError(error, 'invalid_config')) return error;
    throw error;
  }
  throw new Error('expected an invalid_config error');
}

async function asyncConfigError(run: () => Promise<unknown>): Promise<CompactError> {
  try {
    await run();
  } catch (error) {
    if (isCompactError(error, 'invalid_config')) return error;
    throw error;
  }
  throw new Error('expected an invalid_config error');
}

describe('resolveConfig', () => {
  it('applies the spec defaults when nothing is given', () => {
    const config = resolveConfig();
    expect(config.policy).toEqual({
      preset: 'default',
      keep_recent_turns: 6,
      keep_tool_io_pairs: 4,
      roles_never_prune: ['system', 'developer'],
      protected_flag: 'protected',
      strategy: 'task_state',
      max_summary_tokens: 1024,
      clear_min_tokens: 100,
      cache_lifetime_ms: 300_000,
      clear_at_least: 0,
      clear_exclude_tools: [],
      shorten_arguments_above: 2000,
      shorten_arguments_keep: 600,
      repair_input: false,
      user_text_share: DEFAULT_POLICY.userTextShare,
    });
    expect(config.version).toBe(1);
    expect(config.summarizer.provider).toBe('embedded');
    expect(config.redaction.enabled).toBe(true);
    expect(config.telemetry.exporter).toBe('none');
    expect(config.storage).toMatchObject({ adapter: 'fs', path: './.compact/archive' });
  });

  it('does not mutate its input', () => {
    const raw = { policy: { trigger_pct: 0.7 } };
    const before = structuredClone(raw);
    resolveConfig(raw, { env: { COMPACT_KEEP_RECENT_TURNS: '2' } });
    expect(raw).toEqual(before);
  });

  it('names the field path and the rule', () => {
    const error = configError(() =>
      resolveConfig({ policy: { trigger_pct: 1.5 } }, { source: 'compact.yaml' }),
    );
    expect(error.message).toBe('compact.yaml: policy.trigger_pct must be between 0 and 1 (got 1.5)');
    expect(error.issues).toEqual([
      {
        path: ['policy', 'trigger_pct'],
        message: 'must be between 0 and 1 (got 1.5)',
        code: 'invalid_config',
      },
    ]);
    expect(configError(() => resolveConfig({ policy: { trigger_pct: 0 } })).message).toContain(
      'policy.trigger_pct must be between 0 and 1, and not 0',
    );
  });

  it('reports types, ranges, enums, URLs and regular expressions', () => {
    const error = configError(() =>
      resolveConfig({
        model: '',
        max_context_tokens: 'lots',
        policy: {
          keep_recent_turns: 0,
          keep_tool_io_pairs: 1.5,
          roles_never_prune: 'system',
          strategy: 'bref',
        },
        summarizer: { temperature: 3, base_url: 'not a url', api_key_env: 'my key' },
        telemetry: { exporter: ['console', 'stdout'], ariadne_url: 'ftp://host/ingest' },
        storage: { adapter: 'gcs', force_path_style: 'yes' },
        redaction: { enabled: 'sometimes', patterns: ['(unclosed'] },
      }),
    );
    const byPath = Object.fromEntries(error.issues.map((issue) => [issue.path.join('.'), issue.message]));
    expect(byPath).toMatchObject({
      model: 'must not be empty',
      max_context_tokens: 'must be an integer (got "lots")',
      'policy.keep_recent_turns': 'must be an integer >= 1 (got 0)',
      'policy.keep_tool_io_pairs': 'must be an integer (got 1.5)',
      'policy.roles_never_prune': 'must be a list (got "system")',
      'policy.strategy': expect.stringContaining('(did you mean "brief"?)'),
      'summarizer.temperature': 'must be between 0 and 2 (got 3)',
      'summarizer.base_url': 'must be an http(s) URL (got "not a url")',
      'summarizer.api_key_env': 'must be an environment variable name',
      'telemetry.exporter': expect.stringContaining('or a list of them'),
      'telemetry.ariadne_url': 'must be an http(s) URL (got "ftp://host/ingest")',
      'storage.adapter': expect.stringContaining('must be one of "fs", "s3", "none" (got "gcs")'),
      'storage.force_path_style': 'must be true or false (got "yes")',
      'redaction.enabled': 'must be true or false (got "sometimes")',
      'redaction.patterns.0': 'is not a valid regular expression (got "(unclosed")',
    });
    expect(error.message).toContain('redaction.patterns[0] is not a valid regular expression');
    expect(error.message).toMatch(/^config: \d+ problems:\n {2}- /);
  });

  it('rejects unknown keys with a did-you-mean hint', () => {
    const error = configError(() =>
      resolveConfig({
        modle: 'x',
        trigger_pct: 0.9,
        policy: { stratgy: 'brief' },
        telemetry: { zzzzzzzz: 1 },
      }),
    );
    expect(error.issues).toEqual(
      expect.arrayContaining([
        { path: ['modle'], message: 'is not a known key (did you mean "model"?)', code: 'invalid_config' },
        {
          path: ['trigger_pct'],
          message: 'is not a known key (did you mean policy.trigger_pct?)',
          code: 'invalid_config',
        },
        {
          path: ['policy', 'stratgy'],
          message: 'is not a known key (did you mean "strategy"?)',
          code: 'invalid_config',
        },
        { path: ['telemetry', 'zzzzzzzz'], message: 'is not a known key', code: 'invalid_config' },
      ]),
    );
  });

  it('requires a bucket for s3 and room for a summary', () => {
    expect(configError(() => resolveConfig({ storage: { adapter: 's3' } })).message).toContain(
      'storage.bucket is required when storage.adapter is s3',
    );
    expect(
      configError(() => resolveConfig({ max_context_tokens: 2000, policy: { hard_cap_buffer: 1500 } }))
        .message,
    ).toContain('policy.hard_cap_buffer leaves no room');
  });

  it('rejects a non-object config', () => {
    expect(configError(() => resolveConfig([1, 2])).message).toBe(
      'config: (root) must be a mapping of keys to values',
    );
    expect(resolveConfig(null).model).toBe('gpt-4o');
  });

  it('applies environment over the file, and overrides over the environment', () => {
    const config = resolveConfig(
      { model: 'gpt-4', policy: { trigger_pct: 0.85, keep_recent_turns: 3 } },
      {
        env: { COMPACT_TRIGGER_PCT: '0.9', COMPACT_MODEL: 'gpt-4o-mini', COMPACT_KEEP_RECENT_TURNS: '' },
        overrides: { model: 'o3' },
      },
    );
    expect(config.policy.trigger_pct).toBe(0.9);
    expect(config.policy.keep_recent_turns).toBe(3);
    expect(config.model).toBe('o3');
  });

  it('reads every documented environment variable', () => {
    const env = {
      COMPACT_MODEL: 'gpt-4.1',
      COMPACT_MAX_CONTEXT_TOKENS: '1000000',
      COMPACT_PRESET: 'cost',
      COMPACT_TRIGGER_PCT: '0.5',
      COMPACT_HARD_CAP_BUFFER: '2000',
      COMPACT_KEEP_RECENT_TURNS: '3',
      COMPACT_KEEP_TOOL_IO_PAIRS: '2',
      COMPACT_ROLES_NEVER_PRUNE: 'system, developer ,tool',
      COMPACT_PROTECTED_FLAG: 'pinned',
      COMPACT_STRATEGY: 'decision_log',
      COMPACT_MAX_SUMMARY_TOKENS: '512',
      COMPACT_TARGET_PCT: '0.4',
      COMPACT_CLEAR_KEEP_RECENT: '5',
      COMPACT_CLEAR_MIN_TOKENS: '50',
      COMPACT_CACHE_AWARE: 'false',
      COMPACT_COST_TRIGGER: 'false',
      COMPACT_CACHE_LIFETIME_MS: '3600000',
      COMPACT_CLEAR_AT_LEAST: '5000',
      COMPACT_CLEAR_EXCLUDE_TOOLS: 'read_plan, memory',
      COMPACT_SHORTEN_ARGUMENTS_ABOVE: '4000',
      COMPACT_SHORTEN_ARGUMENTS_KEEP: '300',
      COMPACT_REPAIR_INPUT: 'true',
      COMPACT_PREPARE_AT_PCT: '0.6',
      COMPACT_PREPARATION_LEAD: 'fixed',
      COMPACT_SUMMARIZER: 'openai',
      COMPACT_SUMMARIZER_MODEL: 'gpt-4o-mini',
      COMPACT_SUMMARIZER_TIMEOUT_MS: '4000',
      COMPACT_SUMMARIZER_TOTAL_TIMEOUT_MS: '9000',
      COMPACT_SUMMARIZER_BASE_URL: 'http://127.0.0.1:8080/v1',
      COMPACT_SUMMARIZER_API_KEY_ENV: 'MY_KEY',
      COMPACT_SUMMARIZER_SEED: '7',
      COMPACT_SUMMARIZER_TEMPERATURE: '0.2',
      COMPACT_EXPORTER: 'console,ariadne',
      COMPACT_ARIADNE_URL: 'http://127.0.0.1:5175/ingest',
      COMPACT_CONSOLE_FORMAT: 'json',
      COMPACT_OTLP_ENDPOINT: 'http://127.0.0.1:4318/v1/traces',
      COMPACT_STORAGE: 's3',
      COMPACT_STORAGE_PATH: '/tmp/archive',
      COMPACT_S3_BUCKET: 'b',
      COMPACT_S3_PREFIX: 'p/',
      COMPACT_S3_REGION: 'us-east-1',
      COMPACT_S3_KMS_KEY_ID: 'alias/k',
      COMPACT_S3_ENDPOINT: 'http://127.0.0.1:4569',
      COMPACT_S3_FORCE_PATH_STYLE: 'on',
      COMPACT_REDACTION: 'false',
      COMPACT_REDACT_SUMMARIZER_INPUT: 'yes',
      COMPACT_BACKGROUND: '1',
      COMPACT_REQUIRE_ARCHIVE: 'yes',
      COMPACT_ARCHIVE_TIMEOUT_MS: '20000',
      COMPACT_S3_REQUEST_TIMEOUT_MS: '5000',
      COMPACT_HASH_SESSION_IDS: 'true',
      COMPACT_HASH_SESSION_FOLDERS: 'yes',
      COMPACT_SESSION_STORE: 'redis',
      COMPACT_REDIS_URL_ENV: 'SESSIONS_REDIS',
      COMPACT_REDIS_KEY_PREFIX: 'app:',
      COMPACT_STORE_TIMEOUT_MS: '800',
      COMPACT_REDIS_CLOSE_TIMEOUT_MS: '300',
      COMPACT_FAIL_ON_STORAGE_ERROR: 'true',
      COMPACT_CACHE_MAX_BYTES: '1000000',
      COMPACT_USER_TEXT_SHARE: '0.2',
      COMPACT_EXPORT_QUEUE_MAX_SIZE: '100',
      COMPACT_EXPORT_QUEUE_MAX_BATCH_SIZE: '10',
      COMPACT_EXPORT_QUEUE_FLUSH_INTERVAL_MS: '50',
      COMPACT_EXPORT_QUEUE_EXPORT_TIMEOUT_MS: '1000',
      COMPACT_QUEUE_NAME: 'prepare-openai',
      COMPACT_QUEUE_REDIS_URL_ENV: 'QUEUE_REDIS',
      COMPACT_QUEUE_ATTEMPTS: '5',
      COMPACT_QUEUE_BACKOFF_MS: '250',
      COMPACT_QUEUE_CONCURRENCY: '4',
      COMPACT_QUEUE_RATE_LIMIT_MAX: '20',
      COMPACT_QUEUE_RATE_LIMIT_DURATION_MS: '60000',
    };
    expect(Object.keys(env).sort()).toEqual(ENV_OVERRIDES.map((override) => override.variable).sort());
    const config = resolveConfig({}, { env });
    expect(config).toMatchObject({
      model: 'gpt-4.1',
      max_context_tokens: 1_000_000,
      background: true,
      sessions: {
        store: 'redis',
        redis_url_env: 'SESSIONS_REDIS',
        redis_key_prefix: 'app:',
        store_timeout_ms: 800,
        redis_close_timeout_ms: 300,
        fail_on_storage_error: true,
        cache_max_bytes: 1_000_000,
      },
      export_queue: { max_size: 100, max_batch_size: 10, flush_interval_ms: 50, export_timeout_ms: 1000 },
      queue: {
        name: 'prepare-openai',
        redis_url_env: 'QUEUE_REDIS',
        attempts: 5,
        backoff_ms: 250,
        concurrency: 4,
        rate_limit: { max: 20, duration_ms: 60_000 },
      },
      policy: {
        preset: 'cost',
        trigger_pct: 0.5,
        hard_cap_buffer: 2000,
        keep_recent_turns: 3,
        keep_tool_io_pairs: 2,
        roles_never_prune: ['system', 'developer', 'tool'],
        protected_flag: 'pinned',
        strategy: 'decision_log',
        max_summary_tokens: 512,
        target_pct: 0.4,
        clear_keep_recent: 5,
        clear_min_tokens: 50,
        cache_aware: false,
        cost_trigger: false,
        cache_lifetime_ms: 3_600_000,
        clear_at_least: 5_000,
        clear_exclude_tools: ['read_plan', 'memory'],
        shorten_arguments_above: 4000,
        shorten_arguments_keep: 300,
        repair_input: true,
        prepare_at_pct: 0.6,
        user_text_share: 0.2,
      },
      summarizer: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        timeout_ms: 4000,
        total_timeout_ms: 9000,
        base_url: 'http://127.0.0.1:8080/v1',
        api_key_env: 'MY_KEY',
        seed: 7,
        temperature: 0.2,
      },
      telemetry: {
        exporter: ['console', 'ariadne'],
        ariadne_url: 'http://127.0.0.1:5175/ingest',
        console_format: 'json',
        otlp_endpoint: 'http://127.0.0.1:4318/v1/traces',
        hash_session_ids: true,
      },
      storage: {
        adapter: 's3',
        hash_session_ids: true,
        require_archive: true,
        archive_timeout_ms: 20_000,
        request_timeout_ms: 5000,
        path: '/tmp/archive',
        bucket: 'b',
        prefix: 'p/',
        region: 'us-east-1',
        kms_key_id: 'alias/k',
        endpoint: 'http://127.0.0.1:4569',
        force_path_style: true,
      },
      redaction: { enabled: false, summarizer_input: true },
    });
  });

  it('names the variable when an environment value is bad', () => {
    const parse = configError(() => resolveConfig({}, { env: { COMPACT_TRIGGER_PCT: 'abc' } }));
    expect(parse.message).toBe('Invalid environment: COMPACT_TRIGGER_PCT must be a number (got "abc")');
    expect(parse.issues[0]?.path).toEqual(['COMPACT_TRIGGER_PCT']);
    const range = configError(() => resolveConfig({}, { env: { COMPACT_TRIGGER_PCT: '1.5' } }));
    expect(range.message).toContain(
      'policy.trigger_pct must be between 0 and 1 (got 1.5) (set by COMPACT_TRIGGER_PCT)',
    );
    expect(
      configError(() => resolveConfig({}, { env: { COMPACT_KEEP_RECENT_TURNS: '2.5' } })).message,
    ).toContain('COMPACT_KEEP_RECENT_TURNS must be an integer');
    expect(configError(() => resolveConfig({}, { env: { COMPACT_REDACTION: 'maybe' } })).message).toContain(
      'COMPACT_REDACTION must be true or false',
    );
    expect(configError(() => resolveConfig({}, { env: { COMPACT_STRATEGY: 'nope' } })).message).toContain(
      '(set by COMPACT_STRATEGY)',
    );
  });

  it('reads env overrides into a nested object with their origins', () => {
    const result = readEnvOverrides({ COMPACT_ARIADNE_URL: 'http://x/ingest', UNRELATED: '1' });
    expect(result.values).toEqual({ telemetry: { ariadne_url: 'http://x/ingest' } });
    expect(result.origins.get('telemetry.ariadne_url')).toBe('COMPACT_ARIADNE_URL');
  });
});

describe('version', () => {
  it("accepts 1 in the spec's forms and rejects any other", () => {
    expect(resolveConfig({ version: '1.0', model: 'x' }, { env: {} }).version).toBe(1);
    expect(resolveConfig({ version: '1' }, { env: {} }).version).toBe(1);
    expect(resolveConfig({}, { env: {} }).version).toBe(1);
    expect(configError(() => resolveConfig({ version: 2 }, { env: {} })).message).toContain(
      'config: version must be 1 (got 2): the file is for a newer agent-compaction',
    );
    const issue = configError(() => resolveConfig({ version: 'one' }, { env: {} })).issues[0];
    expect(issue?.path).toEqual(['version']);
    expect(issue?.message).toContain('must be 1');
  });
});

describe('loadConfig', () => {
  it('loads the spec example (YAML) verbatim', async () => {
    const config = await loadConfig({ file: join(FIXTURES, 'spec-example.yaml'), env: {} });
    expect(config.model).toBe('gpt-4');
    expect(config.telemetry).toMatchObject({
      exporter: 'ariadne',
      ariadne_url: 'http://localhost:5175/ingest',
    });
    expect(config.redaction.patterns).toEqual([
      '(?i)api[_-]?key\\s*[:=]\\s*\\S+',
      '(?i)password\\s*[:=]\\s*\\S+',
    ]);
  });

  it('loads JSON, with env beating the file', async () => {
    const config = await loadConfig({
      file: join(FIXTURES, 'full.json'),
      env: { COMPACT_TRIGGER_PCT: '0.9' },
    });
    expect(config.policy.trigger_pct).toBe(0.9);
    expect(config.policy.strategy).toBe('code_delta');
    expect(config.storage).toMatchObject({ adapter: 's3', bucket: 'archive', kms_key_id: 'alias/compact' });
  });

  it('reads the file named by COMPACT_CONFIG, relative to cwd', async () => {
    const config = await loadConfig({ env: { COMPACT_CONFIG: 'spec-example.yaml' }, cwd: FIXTURES });
    expect(config.model).toBe('gpt-4');
    expect((await loadConfig({ env: {} })).model).toBe('gpt-4o');
  });

  it('treats an empty file as all defaults', async () => {
    const config = await loadConfig({ file: join(FIXTURES, 'empty.yaml'), env: {} });
    expect(config.policy.preset).toBe('default');
    expect(new CompactManager(await toManagerOptions(config)).triggerTokens).toBe(0.85 * 128_000);
  });

  it('lists every problem of a file with typos', async () => {
    const error = await asyncConfigError(() => loadConfig({ file: join(FIXTURES, 'typos.yaml'), env: {} }));
    expect(error.message).toContain('typos.yaml: 6 problems:');
    expect(error.message).toContain('policy.trigger_pct must be between 0 and 1 (got 1.5)');
    expect(error.message).toContain('modle is not a known key (did you mean "model"?)');
    expect(error.message).toContain('telemetry.exporter must be one of');
  });

  it('reports YAML and JSON syntax errors with their position', async () => {
    const yamlError = await asyncConfigError(() =>
      loadConfig({ file: join(FIXTURES, 'broken.yaml'), env: {} }),
    );
    expect(yamlError.message).toMatch(/broken\.yaml: \(root\) is not valid YAML at line \d+, column \d+/);
    const dir = await mkdtemp(join(tmpdir(), 'compact-config-'));
    await writeFile(join(dir, 'bad.json'), '{"model": ');
    const jsonError = await asyncConfigError(() => loadConfig({ file: join(dir, 'bad.json'), env: {} }));
    expect(jsonError.message).toContain('is not valid JSON');
    expect(parseConfigText('model: x\n', 'compact.yml')).toEqual({ model: 'x' });
  });

  it('reports a missing file', async () => {
    const error = await asyncConfigError(() => loadConfig({ file: '/nonexistent/compact.yaml', env: {} }));
    expect(error.message).toBe('config file not found: /nonexistent/compact.yaml');
  });
});

describe('closestMatch', () => {
  it('suggests only close candidates', () => {
    expect(levenshtein('kitten', 'sitting')).toBe(3);
    expect(levenshtein('', 'abc')).toBe(3);
    expect(closestMatch('keep-recent-turns', ['keep_recent_turns', 'strategy'])).toBe('keep_recent_turns');
    expect(closestMatch('xyz', ['keep_recent_turns', 'strategy'])).toBeUndefined();
  });
});
