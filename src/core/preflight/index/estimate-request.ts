/**
 * `CompactManager.estimate`: the token count of a request as it would be sent now, without
 * a session (system prompt, developer messages, tool schemas and messages; messages before a
 * provider compaction boundary are not counted, see messages/formats/provider-compaction.ts).
 */
import type { TokenBreakdown } from '../../events/events.js';
import type { PreflightOptions, TokenEstimate } from '../../manager/manager-options.js';
import { mediaParts } from '../../messages/formats/media-parts.js';
import type { MessageCodec } from '../../messages/formats/message-codec.js';
import { newestBoundary } from '../../messages/formats/provider-compaction.js';
import { entryTokens } from '../../messages/message-index.js';
import { fixedTokens, type PipelineDeps } from '../prepare-request.js';

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
  const items = deps.index.index(messages, codec);
  // Images, documents, audio and encrypted reasoning are estimated (from headers or sizes),
  // never tokenized: a request holding one is not an exact count.
  let estimated = false;
  // The provider drops what precedes its newest compaction item or block: not counted.
  for (const item of items.slice(Math.max(0, newestBoundary(items)))) {
    estimated ||= mediaParts(item.entry.parsed.raw).length > 0;
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
    exact: counter.exact && !estimated,
  };
}
