/**
 * The manager's options checked and resolved once, in the constructor: model and window,
 * the policy (with the default buffer scaled to small windows), the summarizer time budget
 * and the redactor.
 */

import { DEFAULT_ARCHIVE_TIMEOUT_MS } from '../archive/session-archive.js';
import { modelInfo } from '../counting/token-counter.js';
import { closestOption, invalidConfig, shownValue } from '../errors.js';
import { type CompactPolicy, resolvePolicy } from '../policy.js';
import { guardRedactor, type Redactor, redactorSteps } from '../redaction/redactor.js';
import { releasableRedactor } from '../redaction/releasable-redactor.js';
import { DEFAULT_STORE_TIMEOUT_MS } from '../store/fail-open-store.js';
import {
  type CompactManagerOptions,
  DEFAULT_CACHE_MAX_BYTES,
  DEFAULT_MAX_CONTEXT_TOKENS,
  DEFAULT_MODEL,
  DEFAULT_SUMMARIZER_TIMEOUT_MS,
  MIN_CONTEXT_TOKENS,
} from './manager-options.js';

/** What {@link resolveSettings} returns. */
export interface ManagerSettings {
  model: string;
  maxContextTokens: number;
  customStrategies: string[];
  policy: Readonly<CompactPolicy>;
  /** One total budget per preflight, shared by the summarizer's attempts and the fallback. */
  summarizerTimeoutMs: number;
  redact: Redactor | undefined;
  /**
   * Compiles the redactor's rules in slices (`ready()`; a call before builds them at once), or
   * drops them (`shutdown()`; a later call builds them again).
   */
  redactorRules: { warm(): Promise<void>; release(): void };
  /**
   * The errors of values the redactor could not scan (each replaced whole by `<REDACTED>`),
   * until the event bus reports them as a `compact.error`.
   */
  redactionFailures: unknown[];
  /** Time limit of one call's waits on the session store, all its operations together. */
  storeTimeoutMs: number;
  failOnStorageError: boolean;
  requireArchive: boolean;
  /** Time limit of one archive write. */
  archiveTimeoutMs: number;
  cacheMaxBytes: number;
}

/** Checks and resolves the options a manager is built from (errors name the field). */
export function resolveSettings(options: CompactManagerOptions): ManagerSettings {
  if (options === null || typeof options !== 'object') throw invalidConfig('options', 'must be an object');
  checkKnownKeys(options);
  checkAdapters(options);
  const model = options.model ?? DEFAULT_MODEL;
  if (typeof model !== 'string' || model === '') throw invalidConfig('model', 'must be a non-empty string');
  const maxContextTokens = windowOf(options, model);
  const customStrategies = [...(options.customStrategies ?? [])];
  const policy = managerPolicy(options, maxContextTokens, customStrategies);
  const summarizerTimeoutMs = options.summarizerTimeoutMs ?? DEFAULT_SUMMARIZER_TIMEOUT_MS;
  if (!(summarizerTimeoutMs > 0)) throw invalidConfig('summarizerTimeoutMs', 'must be a positive number');
  const storeTimeoutMs = wholeMs('storeTimeoutMs', options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS);
  const archiveTimeoutMs = wholeMs(
    'archiveTimeoutMs',
    options.archiveTimeoutMs ?? DEFAULT_ARCHIVE_TIMEOUT_MS,
  );
  const cacheMaxBytes = options.cacheMaxBytes ?? DEFAULT_CACHE_MAX_BYTES;
  if (typeof cacheMaxBytes !== 'number' || !Number.isSafeInteger(cacheMaxBytes) || cacheMaxBytes < 0)
    throw invalidConfig(
      'cacheMaxBytes',
      `must be a whole number of bytes >= 0 (got ${String(cacheMaxBytes)})`,
    );
  const redactionFailures: unknown[] = [];
  const redactor = managerRedactor(options, redactionFailures);
  return {
    model,
    maxContextTokens,
    customStrategies,
    policy: Object.freeze(policy),
    summarizerTimeoutMs,
    redact: redactor?.redact,
    redactorRules: redactor ?? { warm: async () => {}, release() {} },
    redactionFailures,
    storeTimeoutMs,
    failOnStorageError: flag(options, 'failOnStorageError'),
    requireArchive: flag(options, 'requireArchive'),
    archiveTimeoutMs,
    cacheMaxBytes,
  };
}

/** The context window: given, or the model's, or the default; an integer of at least the minimum. */
function windowOf(options: CompactManagerOptions, model: string): number {
  const maxContextTokens =
    options.maxContextTokens ?? modelInfo(model).contextWindow ?? DEFAULT_MAX_CONTEXT_TOKENS;
  if (
    typeof maxContextTokens !== 'number' ||
    !Number.isInteger(maxContextTokens) ||
    maxContextTokens < MIN_CONTEXT_TOKENS
  ) {
    throw invalidConfig(
      'maxContextTokens',
      `must be an integer >= ${MIN_CONTEXT_TOKENS} (got ${shownValue(maxContextTokens)})`,
    );
  }
  return maxContextTokens;
}

/** A boolean option, false when not given. */
function flag(options: CompactManagerOptions, key: 'failOnStorageError' | 'requireArchive'): boolean {
  const value = options[key] ?? false;
  if (typeof value !== 'boolean') throw invalidConfig(key, 'must be a boolean');
  return value;
}

/** The policy, with the defaults that depend on the rest of the options. */
function managerPolicy(
  options: CompactManagerOptions,
  maxContextTokens: number,
  customStrategies: readonly string[],
): CompactPolicy {
  const policy = resolvePolicy(options.policy, customStrategies);
  // A session prepared ahead (background, a queue) compacts where its preparation is aimed:
  // the cost trigger's earlier point would come before the prepared summary is ready, so it
  // is on only when asked for (`policy.costTrigger`, or the `cost` preset). With a summarizer
  // of the caller's it stays on: its early compactions only clear (run-cascade.ts) and never
  // call that summarizer.
  if (
    (options.background === true || options.preparationQueue !== undefined) &&
    options.policy?.costTrigger === undefined &&
    options.policy?.preset !== 'cost'
  )
    policy.costTrigger = false;
  // The default buffer scales down for small windows (a 2k local model keeps 200, not 1,500).
  if (options.policy?.hardCapBuffer === undefined)
    policy.hardCapBuffer = Math.min(policy.hardCapBuffer, Math.floor(maxContextTokens * 0.1));
  if (policy.hardCapBuffer >= maxContextTokens) {
    throw invalidConfig(
      'policy.hardCapBuffer',
      `must be smaller than maxContextTokens (${maxContextTokens})`,
    );
  }
  return policy;
}

/**
 * The redactor the options ask for (none when `redaction: false`). It never throws: a value
 * that cannot be scanned is replaced whole and its error kept in `failures` (at most 16).
 */
function managerRedactor(
  options: CompactManagerOptions,
  failures: unknown[],
): { redact: Redactor; warm(): Promise<void>; release(): void } | undefined {
  const redaction = options.redaction ?? true;
  if (redaction === false) return undefined;
  const onError = (error: unknown) => {
    if (failures.length < 16) failures.push(error);
    (redaction as { onError?: (error: unknown) => void }).onError?.(error);
  };
  if (typeof redaction === 'function')
    return { redact: guardRedactor(redaction, onError), warm: async () => {}, release() {} };
  // Built again after shutdown from copies: the caller's arrays may have changed by then.
  const { patterns, extraPatterns, ...rest } = redaction === true ? {} : redaction;
  const settings = {
    ...rest,
    ...(patterns === undefined ? {} : { patterns: patternList(patterns, 'patterns') }),
    ...(extraPatterns === undefined ? {} : { extraPatterns: patternList(extraPatterns, 'extraPatterns') }),
    onError,
  };
  if (settings.custom !== undefined && typeof settings.custom !== 'function')
    throw invalidConfig('redaction.custom', 'must be a function (text) => text');
  return releasableRedactor(redactorSteps(settings));
}

/** A copy of a list of redaction patterns (a typed error when it is no array of strings). */
function patternList(list: unknown, key: 'patterns' | 'extraPatterns'): string[] {
  if (!Array.isArray(list)) throw invalidConfig(`redaction.${key}`, 'must be an array of strings');
  return list.map((pattern, index) => {
    if (typeof pattern !== 'string') throw invalidConfig(`redaction.${key}.${index}`, 'must be a string');
    return pattern;
  });
}

/** Every option of the manager: a key missing here fails the type check. */
const MANAGER_OPTION_KEYS = {
  model: true,
  maxContextTokens: true,
  policy: true,
  summarizer: true,
  summarizerTimeoutMs: true,
  tokenCounter: true,
  store: true,
  storage: true,
  exporters: true,
  exportQueue: true,
  redaction: true,
  customStrategies: true,
  redactSummarizerInput: true,
  background: true,
  preparationQueue: true,
  preparationLead: true,
  agents: true,
  sessionLock: true,
  storeTimeoutMs: true,
  failOnStorageError: true,
  cacheMaxBytes: true,
  requireArchive: true,
  archiveTimeoutMs: true,
  pricing: true,
  clock: true,
  summaryKeys: true,
} satisfies Record<keyof CompactManagerOptions, true>;

/** The methods a `store` and a `storage` must have (their contracts' required ones). */
const ADAPTER_METHODS = {
  store: { kind: 'SessionStore', methods: ['get', 'set', 'delete', 'acquireLock'] },
  storage: { kind: 'StorageAdapter', methods: ['saveTranscript', 'saveSummary', 'saveEvent'] },
} as const;

/**
 * A `store` or `storage` that is not one (`storage: 'fs'` from a config file, a method missing)
 * is refused here: taken as it was, every call went on without it, the store "down" for good.
 */
function checkAdapters(options: CompactManagerOptions): void {
  for (const field of ['store', 'storage'] as const) {
    const value: unknown = options[field];
    if (value === undefined || value === null) continue;
    const { kind, methods } = ADAPTER_METHODS[field];
    if (typeof value !== 'object' && typeof value !== 'function')
      throw invalidConfig(field, `must be a ${kind} object (got ${shownValue(value)})`);
    for (const method of methods) {
      if (typeof (value as Record<string, unknown>)[method] !== 'function')
        throw invalidConfig(`${field}.${method}`, `must be a function (a ${kind} has it)`);
    }
  }
}

/** An unknown option is an error, as in a config file (a misspelt key would do nothing). */
function checkKnownKeys(options: object): void {
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(MANAGER_OPTION_KEYS, key)) {
      const close = closestOption(key, Object.keys(MANAGER_OPTION_KEYS));
      throw invalidConfig(key, `is not a CompactManager option${close ? ` (did you mean ${close}?)` : ''}`);
    }
  }
}

/**
 * Checks a call's options as strictly as the constructor checks the manager's (errors name
 * the field): a value that would switch safety off (`maxContextTokens: NaN`) is refused.
 */
export function checkCallOptions(options: unknown): void {
  if (options === null || typeof options !== 'object') throw invalidConfig('options', 'must be an object');
  const o = options as Record<string, unknown>;
  const max = o.maxContextTokens;
  if (max !== undefined && (typeof max !== 'number' || !Number.isInteger(max) || max <= 0))
    throw invalidConfig('maxContextTokens', `must be a positive integer (got ${String(max)})`);
  const reply = o.replyTokens;
  if (reply !== undefined && (typeof reply !== 'number' || !Number.isInteger(reply) || reply < 0))
    throw invalidConfig('replyTokens', `must be a non-negative integer (got ${String(reply)})`);
  for (const field of ['traceId', 'parentSpanId', 'agent', 'note'] as const) {
    if (o[field] !== undefined && typeof o[field] !== 'string')
      throw invalidConfig(field, 'must be a string');
  }
  if (o.force !== undefined && typeof o.force !== 'boolean')
    throw invalidConfig('force', 'must be a boolean');
  if (o.tools !== undefined && !Array.isArray(o.tools))
    throw invalidConfig('tools', 'must be an array of tool schemas');
  if (o.system !== undefined && typeof o.system !== 'string' && !Array.isArray(o.system))
    throw invalidConfig('system', 'must be a string or an array of content blocks');
  if (
    o.policy !== undefined &&
    (o.policy === null || typeof o.policy !== 'object' || Array.isArray(o.policy))
  )
    throw invalidConfig('policy', 'must be an object');
  const signal = o.signal as { aborted?: unknown; addEventListener?: unknown } | undefined;
  if (
    signal !== undefined &&
    (typeof signal !== 'object' || signal === null || typeof signal.aborted !== 'boolean')
  )
    throw invalidConfig('signal', 'must be an AbortSignal');
}

/** A time limit in whole milliseconds from 1 to 600,000 (ten minutes), or an `invalid_config` naming `field`. */
function wholeMs(field: 'storeTimeoutMs' | 'archiveTimeoutMs', value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 600_000) return value;
  throw invalidConfig(
    field,
    `must be a whole number of milliseconds from 1 to 600000 (got ${String(value)})`,
  );
}
