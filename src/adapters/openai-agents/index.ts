export { loadAgents, type SpanPlacement, withCompactionSpan } from './agents-tracing.js';
export {
  agentToolSchemas,
  type CompactionInputFilterOptions,
  compactionInputFilter,
  dropStaleSummaries,
} from './compaction-input-filter.js';
export {
  CompactionModel,
  CompactionModelProvider,
  type FilteredCall,
  rememberFilteredCall,
} from './compaction-model-provider.js';
export {
  type AgentItem,
  boundaryAwareTail,
  CompactionSession,
  type CompactionSessionOptions,
} from './compaction-session.js';
export { type AgentsRecallToolOptions, recallTool } from './recall-tool.js';
