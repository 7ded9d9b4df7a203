import { randomUUID } from 'node:crypto';
import { CompactError, closestOption, invalidConfig, isCompactError, shownValue } from './errors.js';
import { CompactManager } from './manager/compact-manager.js';
import {
  type CompactionResult,
  type CompactManagerOptions,
  MIN_CONTEXT_TOKENS,
  type PreflightOptions,
} from './manager/manager-options.js';
import { type CompactPolicy, DEFAULT_POLICY } from './policy.js';
import { HARD_LIMIT } from './preflight/decide.js';

/** Options of {@link compactMessages}. */
export interface CompactMessagesOptions
  extends Pick<CompactManagerOptions, 'model' | 'summarizer' | 'tokenCounter' | 'redaction' | 'storage'>,
    Pick<PreflightOptions, 'tools' | 'system' | 'format' | 'signal'> {
  /**
   * The token budget of the whole request (messages, system prompt and tool schemas). A
   * request within it is returned unchanged; a larger one is compacted to at most
   * `policy.targetPct` of it (default half), so the next turns have room. Only when the
   * pinned messages and the latest turn alone exceed that target does the result end
   * between the target and `maxTokens`.
   */
  maxTokens: number;
  /**
   * The policy (recent turns kept, pinned roles, the summary's size, what the cascade may
   * clear or shorten). `triggerPct` and `hardCapBuffer` are fixed by `maxTokens`.
   * @default DEFAULT_POLICY
   */
  policy?: Partial<Omit<CompactPolicy, 'triggerPct' | 'hardCapBuffer'>>;
  /**
   * Compact even when the request fits (to the target).
   * @default false
   */
  force?: boolean;
}

/** The manager options `compactMessages` passes on; the rest are its own. */
const PASSED_ON = new Set(['model', 'summarizer', 'tokenCounter', 'redaction', 'storage']);
const OWN = ['maxTokens', 'policy', 'force', 'tools', 'system', 'format', 'signal'];

/**
 * An unknown option is an error, as for the manager, named as `compactMessages`'s: a manager
 * option it sets itself (`maxContextTokens` is `maxTokens`; a `store` would keep the
 * throwaway session) or a misspelt key would do nothing.
 */
function checkKnownKeys(rest: object): void {
  for (const key of Object.keys(rest)) {
    if (PASSED_ON.has(key)) continue;
    const close = closestOption(key, [...OWN, ...PASSED_ON]);
    const hint = key === 'maxContextTokens' || key === 'targetTokens' ? ' (the budget is maxTokens)' : '';
    throw invalidConfig(key, `is not a compactMessages option${close ? ` (did you mean ${close}?)` : hint}`);
  }
}

/**
 * Compacts one message array to a token budget and says what was done: no session, no
 * store, nothing kept between calls. The same engine as {@link CompactManager} (tool calls
 * never split from their results, pinned messages kept, recent turns verbatim, old tool
 * output cleared, the rest folded into one `<COMPACT-SUMMARY v1>`), with a throwaway
 * session and the built-in summarizer unless one is given. The input is never mutated.
 *
 * The sessionless counterpart of LangChain's `trimMessages`: instead of dropping what does
 * not fit, it summarizes it. For an agent loop, prefer a `CompactManager` with a session id:
 * it keeps one rolling summary across calls and only rewrites the prefix when it must.
 *
 * @example
 * ```ts
 * const { messages, applied, tokensBefore, tokensAfter, levels } = await compactMessages(history, {
 *   model: 'gpt-4o',
 *   maxTokens: 8_000,
 * });
 * ```
 */
export async function compactMessages<M = unknown>(
  messages: readonly M[],
  options: CompactMessagesOptions,
): Promise<CompactionResult<M>> {
  if (options === null || typeof options !== 'object') {
    throw new CompactError('invalid_config', 'compactMessages: options must be an object with maxTokens', {
      issues: [{ path: ['options'], message: 'must be an object' }],
    });
  }
  const { maxTokens, policy, force, tools, system, format, signal, ...rest } = options;
  checkKnownKeys(rest);
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < MIN_CONTEXT_TOKENS) {
    throw invalidConfig(
      'maxTokens',
      `must be an integer >= ${MIN_CONTEXT_TOKENS} (got ${shownValue(maxTokens)})`,
    );
  }
  for (const key of ['triggerPct', 'hardCapBuffer'] as const) {
    if (policy && key in policy)
      throw invalidConfig(`policy.${key}`, 'is set by maxTokens in compactMessages');
  }
  const callOptions = {
    ...(tools === undefined ? {} : { tools }),
    ...(system === undefined ? {} : { system }),
    ...(format === undefined ? {} : { format }),
    ...(signal === undefined ? {} : { signal }),
    ...(force ? { force: true } : {}),
  };
  const run = async (hardCapBuffer: number) => {
    // Aimed at the target, the budget is not the request's limit: the newest message stays
    // whole while the request fits maxTokens (issue 43).
    const limit = hardCapBuffer > 0 ? { [HARD_LIMIT]: maxTokens } : {};
    const manager = new CompactManager({
      ...rest,
      maxContextTokens: maxTokens,
      policy: { ...policy, triggerPct: 1, hardCapBuffer },
    });
    try {
      return await manager.compact<M>(`compact-messages-${randomUUID()}`, messages, {
        ...callOptions,
        ...limit,
      });
    } finally {
      await manager.shutdown();
    }
  };
  // The cascade cuts only what is over its budget, and the latest turn's tool pairs are kept
  // whole: with maxTokens as the budget a result could stop above the target (4,473 for
  // 8,000). A request over maxTokens (or forced) is compacted with the target as the budget
  // and maxTokens as its limit: a newest message that alone keeps it over the target is sent
  // whole when maxTokens holds it; when pinned messages cannot fit the target, to maxTokens.
  const target = Math.floor((policy?.targetPct ?? DEFAULT_POLICY.targetPct) * maxTokens);
  // The probe counts only (the model's counter): it is shut down at once, ending its hold on
  // the shared encodings and tables, without closing the caller's storage or summarizer.
  const fits = async () => {
    const { model, tokenCounter } = rest;
    const probe = new CompactManager({
      ...(model === undefined ? {} : { model }),
      ...(tokenCounter === undefined ? {} : { tokenCounter }),
      maxContextTokens: maxTokens,
      redaction: false,
    });
    try {
      return probe.estimate(messages, callOptions).total <= maxTokens;
    } finally {
      await probe.shutdown();
    }
  };
  if (target < 1 || (!force && (await fits()))) return run(0);
  try {
    return await run(maxTokens - target);
  } catch (error) {
    if (!isCompactError(error, 'insufficient_budget')) throw error;
    return run(0);
  }
}
