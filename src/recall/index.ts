/**
 * `agent-compaction/recall`: the agent reads back what compaction cleared, shortened, cut or
 * summarized, by the reference a placeholder names or by a full-text query over the session's
 * archive. Ready-made tool definitions live next to each integration
 * (`recallTool` in `/openai-agents` and `/ai-sdk`, `recallToolDefinition` in `/anthropic`).
 */
export {
  DEFAULT_RECALL_OPTIONS,
  MAX_QUERY_CHARS,
  RecallArchive,
  type RecallHit,
  type RecallOptions,
  type RecallPage,
} from './recall-archive.js';
export { isRecallError, RecallError, type RecallErrorCode } from './recall-error.js';
export {
  formatRecallHits,
  formatRecallPage,
  parseRecallInput,
  RECALL_INPUT_SCHEMA,
  RECALL_INPUT_SCHEMA_STRICT,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  type RecallSession,
  type RecallToolInput,
  type RecallToolResult,
  resolveRecallSession,
  runRecallTool,
} from './recall-tool.js';
