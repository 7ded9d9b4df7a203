import type { ParsedMessage } from './formats/message-codec.js';

/** The minimum pinning needs to know about a message. */
export interface PartitionInput {
  readonly parsed: Pick<
    ParsedMessage,
    'role' | 'kind' | 'toolCalls' | 'toolResults' | 'meta' | 'providerCompaction'
  >;
}

/** Which messages are pinned, given the policy. */
export interface PinRule {
  rolesNeverPrune: readonly string[];
  protectedFlag: string;
}

/**
 * True when the message is never pruned: a never-prune role, `meta[protectedFlag] === true`,
 * or a provider compaction item or block (never cleared, shortened, cut or summarized).
 */
export function isPinned(message: PartitionInput, rule: PinRule): boolean {
  return (
    rule.rolesNeverPrune.includes(message.parsed.role) ||
    message.parsed.meta?.[rule.protectedFlag] === true ||
    message.parsed.providerCompaction !== undefined
  );
}
