/**
 * The manager's options checked and resolved once, in the constructor: model and window,
 * the policy (with the default buffer scaled to small windows), the summarizer time budget
 * and the redactor.
 */

import { modelInfo } from './counting/token-counter.js';
import { invalidConfig } from './errors.js';
import {
  type CompactManagerOptions,
  DEFAULT_MAX_CONTEXT_TOKENS,
  DEFAULT_MODEL,
  DEFAULT_SUMMARIZER_TIMEOUT_MS,
  MIN_CONTEXT_TOKENS,
} from './manager-options.js';
import { type CompactPolicy, resolvePolicy } from './policy.js';
import { createRedactor, guardRedactor, type Redactor } from './redaction/redactor.js';

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
   * The errors of values the redactor could not scan (each replaced whole by `<REDACTED>`),
   * until the event bus reports them as a `compact.error`.
   */
  redactionFailures: unknown[];
}

/** Checks and resolves the options a manager is built from (errors name the field). */
export function resolveSettings(options: CompactManagerOptions): ManagerSettings {
  if (options === null || typeof options !== 'object') throw invalidConfig('options', 'must be an object');
  checkKnownKeys(options);
  const model = options.model ?? DEFAULT_MODEL;
  if (typeof model !== 'string' || model === '') throw invalidConfig('model', 'must be a non-empty string');
  const maxContextTokens =
    options.maxContextTokens ?? modelInfo(model).contextWindow ?? DEFAULT_MAX_CONTEXT_TOKENS;
  if (
    typeof maxContextTokens !== 'number' ||
    !Number.isInteger(maxContextTokens) ||
    maxContextTokens < MIN_CONTEXT_TOKENS
  ) {
    throw invalidConfig(
      'maxContextTokens',
      `must be an integer >= ${MIN_CONTEXT_TOKENS} (got ${String(maxContextTokens)})`,
    );
  }
  const customStrategies = [...(options.customStrategies ?? [])];
  const policy = resolvePolicy(options.policy, customStrategies);
  // The default buffer scales down for small windows (a 2k local model keeps 200, not 1,500).
  if (options.policy?.hardCapBuffer === undefined)
    policy.hardCapBuffer = Math.min(policy.hardCapBuffer, Math.floor(maxContextTokens * 0.1));
  if (policy.hardCapBuffer >= maxContextTokens) {
    throw invalidConfig(
      'policy.hardCapBuffer',
      `must be smaller than maxContextTokens (${maxContextTokens})`,
    );
  }
  const summarizerTimeoutMs = options.summarizerTimeoutMs ?? DEFAULT_SUMMARIZER_TIMEOUT_MS;
  if (!(summarizerTimeoutMs > 0)) throw invalidConfig('summarizerTimeoutMs', 'must be a positive number');
  const redaction = options.redaction ?? true;
  // Never throws: a value that cannot be scanned is replaced whole and reported (bounded list).
  const redactionFailures: unknown[] = [];
  const onError = (error: unknown) => {
    if (redactionFailures.length < 16) redactionFailures.push(error);
    (redaction as { onError?: (error: unknown) => void }).onError?.(error);
  };
  const redact =
    redaction === false
      ? undefined
      : typeof redaction === 'function'
        ? guardRedactor(redaction, onError)
        : createRedactor({ ...(redaction === true ? {} : redaction), onError });
  return {
    model,
    maxContextTokens,
    customStrategies,
    policy: Object.freeze(policy),
    summarizerTimeoutMs,
    redact,
    redactionFailures,
  };
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
  agents: true,
  sessionLock: true,
} satisfies Record<keyof CompactManagerOptions, true>;

/** An unknown option is an error, as in a config file (a misspelt key would do nothing). */
function checkKnownKeys(options: object): void {
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(MANAGER_OPTION_KEYS, key)) {
      const close = Object.keys(MANAGER_OPTION_KEYS).find((known) => known.toLowerCase() === key.toLowerCase().replace(/_/g, ''));
      throw invalidConfig(key, `is not a CompactManager option${close ? ` (did you mean ${close}?)` : ''}`);
    }
  }
}
