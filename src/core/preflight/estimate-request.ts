/**
 * `CompactManager.estimate`: the token count of a request as it would be sent now, without
 * a session (system prompt, developer messages, tool schemas and messages).
 */
import type { TokenBreakdown } from '../events/events.js';
import type { PreflightOptions, TokenEstimate } from '../manager-options.js';
import type { MessageCodec } from '../messages/formats/message-codec.js';
import { entryTokens } from '../messages/message-index.js';
import { fixedTokens, type PipelineDeps } from './prepare-request.js';

/** Counts `messages` with the pipeline's caches (parsed messages, tool schemas). */
export function estimateRequest(
  deps: PipelineDeps,
  messages: readonly unknown[],
  codec: MessageCodec,
  options: Pick<PreflightOptions, 'tools' | 'system' | 'format'>,
  maxContextTokens: number,
): TokenEstimate {
  const counter = deps.counter;
  const fixed = fixedTokens(deps, options);
  const breakdown: TokenBreakdown = {
    system: fixed.system,
    developer: 0,
    toolsSchema: fixed.toolsSchema,
    messages: counter.requestOverhead,
  };
  for (const item of deps.index.index(messages, codec)) {
    const tokens = entryTokens(item, counter);
    const role = item.entry.parsed.role;
    if (role === 'system') breakdown.system += tokens;
    else if (role === 'developer') breakdown.developer += tokens;
    else breakdown.messages += tokens;
  }
  const total = breakdown.system + breakdown.developer + breakdown.toolsSchema + breakdown.messages;
  return {
    model: deps.model,
    total,
    breakdown,
    maxContextTokens,
    usagePct: total / maxContextTokens,
    usagePercent: Math.round((10_000 * total) / maxContextTokens) / 100,
    tokenizer: counter.name,
    exact: counter.exact,
  };
}
