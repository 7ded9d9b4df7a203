export {
  type CompactThreadHistoryArgs,
  compactThreadHistory,
  type HistoryMessage,
  THREAD_SUMMARY_SYSTEM_PROMPT,
  type ThreadMessageLike,
  type UserTurn,
} from './compact-thread-history.js';
export { feedAnthropicUsage } from './compacting-messages.js';
export { type AnthropicMessage, type WithCompactionOptions, withCompaction } from './with-compaction.js';
