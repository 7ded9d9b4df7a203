export {
  type CompactThreadHistoryArgs,
  compactThreadHistory,
  type HistoryMessage,
  THREAD_SUMMARY_SYSTEM_PROMPT,
  type ThreadMessageLike,
  type UserTurn,
} from './compact-thread-history.js';
export { feedAnthropicUsage } from './compacting-messages.js';
export {
  type AnthropicRecallTool,
  type AnthropicRecallToolDefinition,
  type AnthropicRecallToolOptions,
  type AnthropicRecallToolResult,
  type AnthropicToolUseBlock,
  recallToolDefinition,
} from './recall-tool.js';
export { type AnthropicMessage, type WithCompactionOptions, withCompaction } from './with-compaction.js';
