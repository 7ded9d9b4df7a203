import { z } from 'zod';
import { DEFAULT_POLICY, POLICY_PRESETS, type PolicyPreset } from '../core/policy.js';
import { STRATEGY_NAMES } from '../core/summary/summarizer.js';
import { between, integer } from './schema-helpers.js';

/** `policy`: when and how a session is compacted. */
export const policySchema = z
  .strictObject({
    preset: z
      .enum(Object.keys(POLICY_PRESETS) as [PolicyPreset, ...PolicyPreset[]])
      .default(DEFAULT_POLICY.preset)
      .describe(
        'Named settings the policy starts from (keys set beside it win): default is the cheapest measured under prompt caching at every window (cost_trigger, cache_aware, 4 recent tool results kept); quality keeps what the window can hold (trigger 0.85 to target 0.5, clearing only to the target, no cost trigger, 3 recent results); cost is the default keeping 3 recent results (docs/how-it-works.md, Measured).',
      ),
    trigger_pct: between(0, 1, true)
      .optional()
      .describe(
        `Compact when the estimated request reaches this fraction of max_context_tokens (and never within a tenth of the window of what the last compaction left). Default ${DEFAULT_POLICY.triggerPct}.`,
      ),
    hard_cap_buffer: integer(0)
      .optional()
      .describe(
        `Tokens reserved for the next input and tool results; the budget is max_context_tokens - hard_cap_buffer. Default ${DEFAULT_POLICY.hardCapBuffer}, or a tenth of the window when that is smaller.`,
      ),
    keep_recent_turns: integer(1)
      .default(DEFAULT_POLICY.keepRecentTurns)
      .describe('Recent user/assistant turns kept verbatim.'),
    keep_tool_io_pairs: integer(1)
      .default(DEFAULT_POLICY.keepToolIoPairs)
      .describe('Recent tool call + tool output pairs kept verbatim.'),
    roles_never_prune: z
      .array(z.string().min(1))
      .default([...DEFAULT_POLICY.rolesNeverPrune])
      .describe('Roles that are never pruned or summarized.'),
    protected_flag: z
      .string()
      .min(1)
      .default(DEFAULT_POLICY.protectedFlag)
      .describe('The `meta` key that marks a message as protected.'),
    strategy: z
      .enum(STRATEGY_NAMES as [string, ...string[]])
      .default(DEFAULT_POLICY.strategy)
      .describe('Summarization strategy: task_state, brief, decision_log or code_delta.'),
    max_summary_tokens: integer(16)
      .default(DEFAULT_POLICY.maxSummaryTokens)
      .describe('Token limit of one summary.'),
    user_text_share: z
      .number()
      .min(0)
      .lt(1)
      .default(DEFAULT_POLICY.userTextShare)
      .describe(
        "Share of the target that the user's own text messages keep verbatim when compacted (the opening request first, then the newest); the rest goes into the summary.",
      ),
    target_pct: between(0, 1, true)
      .optional()
      .describe(
        'After a trigger, compact down to this fraction of max_context_tokens. Default 0.5, or 0.6 x trigger_pct when the trigger is lower.',
      ),
    clear_keep_recent: integer(0)
      .optional()
      .describe(
        `Cascade level a: the most recent tool results that are never cleared. Default ${DEFAULT_POLICY.clearKeepRecent} (3 with preset quality or cost).`,
      ),
    clear_min_tokens: integer(0)
      .default(DEFAULT_POLICY.clearMinTokens)
      .describe('Cascade level a: tool results smaller than this (tokens) are not worth clearing.'),
    cache_lifetime_ms: integer(0)
      .default(DEFAULT_POLICY.cacheLifetimeMs)
      .describe(
        "The provider's prompt-cache lifetime: a session idle longer than this compacts from prepare_at_pct (its cache is cold anyway); 0 turns it off.",
      ),
    clear_at_least: integer(0)
      .default(DEFAULT_POLICY.clearAtLeast)
      .describe(
        "The least a compaction must free (tokens) to be worth its rewrite (Anthropic's clear_at_least): an automatic compaction that would free less is not applied while the request fits the budget; 0 turns it off.",
      ),
    cache_aware: z
      .boolean()
      .optional()
      .describe(
        'Cascade level a, priced for prompt caching: once a compaction clears, it clears every old tool result (one rewrite, the next far away); false stops at the target. Default true (false with preset quality).',
      ),
    cost_trigger: z
      .boolean()
      .optional()
      .describe(
        'Compact before trigger_pct once the cache reads of what the request grew since the last compaction add up to one cache write of what that compaction left (priced for the model; at least a tenth of the window freed; with an LLM summarizer such an early compaction only clears and shortens, it never calls the summarizer). Default true (false with preset quality, and with background or a queue unless set).',
      ),
    clear_exclude_tools: z
      .array(z.string().min(1))
      .default([...DEFAULT_POLICY.clearExcludeTools])
      .describe('Cascade level a: tools whose results are never cleared.'),
    shorten_arguments_above: integer(1)
      .default(DEFAULT_POLICY.shortenArgumentsAbove)
      .describe(
        'Cascade level b: tool-call arguments longer than this (characters) in old messages are shortened.',
      ),
    shorten_arguments_keep: integer(1)
      .default(DEFAULT_POLICY.shortenArgumentsKeep)
      .describe('Cascade level b: characters kept of each shortened argument (head and tail).'),
    repair_input: z
      .boolean()
      .default(DEFAULT_POLICY.repairInput)
      .describe(
        'Repair broken input (orphan or duplicate tool results dropped, unanswered calls answered with a placeholder) instead of failing with invalid_messages.',
      ),
    prepare_at_pct: between(0, 1, true)
      .optional()
      .describe(
        'With background compaction, prepare a summary off the critical path from this fraction of max_context_tokens (default 0.7, below trigger_pct).',
      ),
  })
  .describe('When and how a session is compacted.');

/** Policy overrides of one agent: the policy's keys, each optional and without a default. */
export const agentPolicySchema = z
  .strictObject(
    Object.fromEntries(
      Object.entries(policySchema.shape).map(([key, field]) => {
        const bare = field instanceof z.ZodDefault ? field.removeDefault() : field;
        return [key, bare.optional().describe(field.description ?? key)];
      }),
    ) as unknown as {
      [K in keyof typeof policySchema.shape]: z.ZodOptional<
        z.ZodType<z.output<(typeof policySchema.shape)[K]>>
      >;
    },
  )
  .describe(
    "Overrides of the top-level policy for this agent (keys not given keep the top-level policy's values).",
  );

/** `agents.<name>`: one agent's own compactor over a shared history. */
export const agentSchema = z
  .strictObject({
    policy: agentPolicySchema.optional(),
    summarizer_timeout_ms: integer(1)
      .optional()
      .describe("Total time limit of this agent's summarization, in milliseconds (default: the manager's)."),
  })
  .describe("One agent's compactor: its own summary and state, and optionally its own policy.");
