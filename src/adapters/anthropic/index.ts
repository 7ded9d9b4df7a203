export {
  type CompactThreadHistoryArgs,
  compactThreadHistory,
  DEFAULT_ANTHROPIC_MAX_CONTEXT_TOKENS,
  DEFAULT_COMPACTION_TIMEOUT_MS,
  DEFAULT_THREAD_TRIGGER,
  type HistoryMessage,
  resolveMaxContextTokens,
  shouldTriggerCompaction,
  THREAD_SUMMARY_SYSTEM_PROMPT,
  type ThreadCompactionResult,
} from './compact-thread-history.js';
export {
  type AnthropicRecallTool,
  type AnthropicRecallToolDefinition,
  type AnthropicRecallToolOptions,
  type AnthropicRecallToolResult,
  type AnthropicToolUseBlock,
  recallToolDefinition,
} from './recall-tool.js';
export { type WithCompactionOptions, withCompaction } from './with-compaction.js';
