import { closestOption, invalidConfig, shownValue } from './errors.js';
import { STRATEGY_NAMES, type StrategyName } from './summary/summarizer.js';

/** The named settings a policy can start from ({@link POLICY_PRESETS}). */
export type PolicyPreset = 'default' | 'quality' | 'cost';

/**
 * What each preset sets; keys the policy gives itself win over the preset's.
 *
 * - `default`: the cheapest measured under prompt caching at every window (issue 47): compact
 *   when the growth since the last compaction has paid for a rewrite in cache reads
 *   (`costTrigger`), else at 0.85 of the window; clear every old tool result but the newest 4
 *   once clearing (`cacheAware`). In the cost bench (bench/cache-cost.ts, built-in summarizer)
 *   0.68x / 0.66x the bill (Anthropic / OpenAI) of a summarizer keeping 8 messages at 32k,
 *   0.49x / 0.45x at 128k, every ask of the user kept, at least 8 newest messages verbatim
 *   (the same with a summarizer of the caller's: its early compactions only clear).
 * - `quality`: keep what the window can hold (the defaults before issue 47): compact at 0.85 of
 *   the window down to 0.5, clearing only down to the target, the newest 3 results kept.
 * - `cost`: the default with the newest 3 tool results kept instead of 4. (Before issue 47 it
 *   compacted at 0.4 of the window down to 0.2, and thrashed in small windows.)
 */
export const POLICY_PRESETS: Readonly<Record<PolicyPreset, Readonly<Partial<CompactPolicy>>>> = Object.freeze(
  {
    default: Object.freeze({}),
    quality: Object.freeze({ cacheAware: false, costTrigger: false, clearKeepRecent: 3 }),
    cost: Object.freeze({ clearKeepRecent: 3 }),
  },
);

/** When and how a session is compacted. Config files use the same keys in snake_case. */
export interface CompactPolicy {
  /**
   * The named settings this policy starts from ({@link POLICY_PRESETS}): `'default'` the
   * cheapest measured under prompt caching at every window; `'quality'` keeps what the window
   * can hold (the defaults before issue 47); `'cost'` the default keeping 3 recent tool results.
   * Keys set beside it win over the preset's.
   * @default 'default'
   */
  preset: PolicyPreset;
  /**
   * Compact when the estimated request reaches this fraction of `maxContextTokens`.
   * @default 0.85
   */
  triggerPct: number;
  /**
   * Tokens reserved for the next user input and tool responses: the budget is
   * `maxContextTokens - hardCapBuffer`.
   * @default 1500, or a tenth of the window when that is smaller (unless set)
   */
  hardCapBuffer: number;
  /**
   * Recent conversational turns (a user message and the replies to it) kept verbatim.
   * @default 6
   */
  keepRecentTurns: number;
  /**
   * Recent tool call/result groups kept verbatim.
   * @default 4
   */
  keepToolIoPairs: number;
  /**
   * Roles that are never pruned or summarized.
   * @default ['system', 'developer']
   */
  rolesNeverPrune: string[];
  /**
   * The `meta` key that marks a message as protected.
   * @default 'protected'
   */
  protectedFlag: string;
  /**
   * Summarization strategy.
   * @default 'task_state'
   */
  strategy: StrategyName | (string & {});
  /**
   * The summary's token limit. The built-in summarizer may go past it to fill room the verbatim
   * recent turns leave under the target (a large turn before them was folded); an LLM
   * summarizer never does.
   * @default 1024
   */
  maxSummaryTokens: number;
  /**
   * Share of the target (`targetPct` of the window) that the user's own text messages may
   * keep verbatim when a compaction folds them: the opening request first, then the newest.
   * What does not fit goes into the summary's first sections. `0` folds them all.
   * @default 0.15
   */
  userTextShare: number;
  /**
   * After a trigger, compact down to this fraction of `maxContextTokens`, well below the
   * trigger, so the next trigger is many steps away.
   * @default 0.5 (or 0.6 x triggerPct when the trigger is set lower)
   */
  targetPct: number;
  /**
   * With `background: true` on the manager, a summary of the older part of the view is
   * prepared off the critical path once the request reaches this fraction of
   * `maxContextTokens`, so the trigger swaps it in instead of waiting on the summarizer.
   * Ignored without `background`.
   * @default 0.7 (or 0.8 x triggerPct when the trigger is set at or below 0.7)
   */
  prepareAtPct: number;
  /**
   * How long the provider keeps a prompt cache (Anthropic's default 5 minutes; set 3,600,000
   * for its 1-hour cache). When a session's previous call is older than this, its cache is
   * cold anyway: a request past `prepareAtPct` compacts then rather than later at the trigger,
   * when the rewrite would cost a cache write on a warm cache. `0` turns this off.
   * @default 300000
   */
  cacheLifetimeMs: number;
  /**
   * The least a compaction must free (tokens) to be worth its rewrite, like Anthropic's
   * `clear_at_least`: a triggered compaction that would free less (a clearing pass over small
   * results) is not applied while the request fits the budget; the request goes out as it is
   * and the cache stays warm. Manual compactions and requests over the budget always compact.
   * `0` turns this off.
   * @default 0
   */
  clearAtLeast: number;
  /**
   * Cascade level a: the most recent tool results never cleared.
   * @default 4 (3 with the `quality` and `cost` presets)
   */
  clearKeepRecent: number;
  /**
   * Cascade level a: tool results smaller than this (tokens) are not worth clearing.
   * @default 100
   */
  clearMinTokens: number;
  /**
   * Priced for prompt caching: a compaction rewrites the prompt from its first change on (a
   * cache write of everything after it), so once it clears, it clears every old tool result
   * (all but `clearKeepRecent`, the current round and `clearExcludeTools`) rather than only
   * down to the target: one rewrite that leaves the next trigger far away, at the price of
   * tool output the window could have held. Off in the `quality` preset: clearing stops at the
   * target.
   * @default true
   */
  cacheAware: boolean;
  /**
   * Compact before the trigger once it pays under prompt caching: when the cache reads of what
   * the request grew since the last compaction add up to one cache write of what that
   * compaction left (the rent-or-buy rule, priced with the manager's `pricing` for its model).
   * The point follows the window and the measured growth: about sqrt(2 x growth per call x
   * trough x write / read) above the trough, at least a tenth of the window. With a summarizer
   * of the caller's (paid per call), such an early compaction only clears and shortens (declined
   * when that frees less than a tenth of the window, or when the next trigger would have to
   * summarize anyway: clearing early would only spend what that trigger clears): it never
   * calls the summarizer. Off in the
   * `quality` preset, and by default with background or queued preparation.
   * @default true
   */
  costTrigger: boolean;
  /**
   * Cascade level a: tools whose results are never cleared.
   * @default []
   */
  clearExcludeTools: string[];
  /**
   * Cascade level b: tool-call arguments longer than this (characters) in old messages are shortened.
   * @default 2000
   */
  shortenArgumentsAbove: number;
  /**
   * Cascade level b: characters kept of each shortened argument (head and tail).
   * @default 600
   */
  shortenArgumentsKeep: number;
  /**
   * Repair broken input instead of rejecting it: orphan and duplicate tool results are
   * dropped, unanswered calls get a short placeholder result; one `compact.repair` event each.
   * @default false (an `invalid_messages` error naming the index)
   */
  repairInput: boolean;
}

/**
 * Every policy field's default, before a preset applies its own (see {@link POLICY_PRESETS}).
 * Frozen, lists included: spread it into your own policy to change a field.
 */
export const DEFAULT_POLICY: Readonly<CompactPolicy> = Object.freeze({
  preset: 'default',
  triggerPct: 0.85,
  hardCapBuffer: 1500,
  keepRecentTurns: 6,
  keepToolIoPairs: 4,
  rolesNeverPrune: Object.freeze(['system', 'developer']) as string[],
  protectedFlag: 'protected',
  strategy: 'task_state',
  maxSummaryTokens: 1024,
  userTextShare: 0.15,
  targetPct: 0.5,
  prepareAtPct: 0.7,
  cacheLifetimeMs: 300_000,
  clearAtLeast: 0,
  clearKeepRecent: 4,
  clearMinTokens: 100,
  cacheAware: true,
  costTrigger: true,
  clearExcludeTools: Object.freeze([]) as unknown as string[],
  shortenArgumentsAbove: 2000,
  shortenArgumentsKeep: 600,
  repairInput: false,
});

function checkInteger(path: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || !Number.isInteger(value) || value < min) {
    throw invalidConfig(path, `must be an integer >= ${min} (got ${shownValue(value)})`);
  }
  return value;
}

/** A share of the window: a finite number in the range `inRange` accepts, or throws `rule`. */
function checkShare(path: string, value: unknown, inRange: (share: number) => boolean, rule: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || !inRange(value)) {
    throw invalidConfig(path, `${rule} (got ${shownValue(value)})`);
  }
  return value;
}

/** Throws unless `value` is a list of strings. */
function checkNames(path: string, value: unknown, what: string): void {
  if (!Array.isArray(value) || value.some((name) => typeof name !== 'string')) {
    throw invalidConfig(path, `must be a list of ${what}`);
  }
}

/** The defaults, then the preset's values, then the caller's own (lists copied). */
function mergePolicy(policy: Partial<CompactPolicy>): CompactPolicy {
  const merged: CompactPolicy = {
    ...DEFAULT_POLICY,
    rolesNeverPrune: [...DEFAULT_POLICY.rolesNeverPrune],
    clearExcludeTools: [],
  };
  const preset = policy.preset ?? DEFAULT_POLICY.preset;
  if (!Object.hasOwn(POLICY_PRESETS, preset))
    throw invalidConfig(
      'policy.preset',
      `must be one of ${Object.keys(POLICY_PRESETS).join(', ')} (got ${String(preset)})`,
    );
  Object.assign(merged, POLICY_PRESETS[preset]);
  for (const [key, value] of Object.entries(policy)) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_POLICY)) {
      const close = closestOption(key, Object.keys(DEFAULT_POLICY));
      throw invalidConfig(
        `policy.${key}`,
        `is not a policy option${close ? ` (did you mean ${close}?)` : ''}`,
      );
    }
    (merged as unknown as Record<string, unknown>)[key] = Array.isArray(value) ? [...value] : value;
  }
  return merged;
}

/**
 * The window shares: the trigger, then the target and the point to prepare at, each below the
 * trigger (derived from it when the caller set the trigger alone).
 */
function checkShares(merged: CompactPolicy, policy: Partial<CompactPolicy>): void {
  const triggerPct = checkShare(
    'policy.triggerPct',
    merged.triggerPct,
    (v) => v > 0 && v <= 1,
    'must be between 0 and 1',
  );
  checkShare(
    'policy.userTextShare',
    merged.userTextShare,
    (v) => v >= 0 && v < 1,
    'must be at least 0 and below 1',
  );
  const belowTrigger = `must be above 0 and below policy.triggerPct (${triggerPct})`;
  const underTrigger = (v: number) => v > 0 && v < triggerPct;
  if (policy.targetPct === undefined && merged.targetPct >= triggerPct) merged.targetPct = triggerPct * 0.6;
  checkShare('policy.targetPct', merged.targetPct, underTrigger, belowTrigger);
  if (policy.prepareAtPct === undefined && merged.prepareAtPct >= triggerPct)
    merged.prepareAtPct = triggerPct * 0.8;
  checkShare('policy.prepareAtPct', merged.prepareAtPct, underTrigger, belowTrigger);
}

/** The counts, flags, lists and names, each named by its field when wrong. */
function checkFields(merged: CompactPolicy, customStrategies: readonly string[]): void {
  checkInteger('policy.hardCapBuffer', merged.hardCapBuffer, 0);
  checkInteger('policy.keepRecentTurns', merged.keepRecentTurns, 1);
  checkInteger('policy.keepToolIoPairs', merged.keepToolIoPairs, 1);
  checkInteger('policy.maxSummaryTokens', merged.maxSummaryTokens, 16);
  checkInteger('policy.clearKeepRecent', merged.clearKeepRecent, 0);
  checkInteger('policy.clearMinTokens', merged.clearMinTokens, 0);
  checkInteger('policy.cacheLifetimeMs', merged.cacheLifetimeMs, 0);
  checkInteger('policy.clearAtLeast', merged.clearAtLeast, 0);
  checkInteger('policy.shortenArgumentsAbove', merged.shortenArgumentsAbove, 64);
  checkInteger('policy.shortenArgumentsKeep', merged.shortenArgumentsKeep, 32);
  checkNames('policy.clearExcludeTools', merged.clearExcludeTools, 'tool names');
  for (const flag of ['repairInput', 'cacheAware', 'costTrigger'] as const) {
    if (typeof merged[flag] !== 'boolean') throw invalidConfig(`policy.${flag}`, 'must be a boolean');
  }
  checkNames('policy.rolesNeverPrune', merged.rolesNeverPrune, 'role names');
  if (typeof merged.protectedFlag !== 'string' || merged.protectedFlag === '') {
    throw invalidConfig('policy.protectedFlag', 'must be a non-empty string');
  }
  const strategies: string[] = [...STRATEGY_NAMES, ...customStrategies];
  if (typeof merged.strategy !== 'string' || !strategies.includes(merged.strategy)) {
    throw invalidConfig(
      'policy.strategy',
      `must be one of ${strategies.join(', ')} (got ${String(merged.strategy)})`,
    );
  }
}

/**
 * Applies defaults to a partial policy and validates it, without touching the input.
 * Throws `CompactError('invalid_config')` naming the field.
 */
export function resolvePolicy(
  policy: Partial<CompactPolicy> = {},
  customStrategies: readonly string[] = [],
): CompactPolicy {
  const merged = mergePolicy(policy);
  checkShares(merged, policy);
  checkFields(merged, customStrategies);
  return merged;
}

/**
 * `base` with the overrides that apply to one call (an agent's policy, then the call's own),
 * validated; `base` itself when there are none.
 */
export function overridePolicy(
  base: CompactPolicy,
  overrides: readonly (Partial<CompactPolicy> | undefined)[],
  customStrategies: readonly string[] = [],
): CompactPolicy {
  const present = overrides.filter((o): o is Partial<CompactPolicy> => o !== undefined);
  if (present.length === 0) return base;
  const merged: Partial<CompactPolicy> = { ...base };
  // An override naming a preset takes the preset's values, then its own keys.
  for (const override of present) {
    const preset = override.preset === undefined ? undefined : POLICY_PRESETS[override.preset];
    if (preset) {
      Object.assign(merged, preset);
      // Derived from the trigger: taken again from the preset's unless the override sets it.
      delete merged.prepareAtPct;
    }
    Object.assign(merged, override);
  }
  return resolvePolicy(merged, customStrategies);
}

/**
 * The policy of a call that asks for `replyTokens` of reply: the buffer below the window is at
 * least that and a hundredth of the window more (the provider counts the prompt in its own wire
 * format, a few tokens per message off the library's count of another format), so the prompt
 * and the reply fit together. A reply not below the window changes nothing (no prompt fits
 * with it).
 */
export function reserveReply(
  policy: CompactPolicy,
  replyTokens: number | undefined,
  maxContextTokens: number,
): CompactPolicy {
  if (replyTokens === undefined || replyTokens >= maxContextTokens) return policy;
  const room = Math.min(replyTokens + Math.floor(maxContextTokens / 100), maxContextTokens - 1);
  return room > policy.hardCapBuffer ? { ...policy, hardCapBuffer: room } : policy;
}
