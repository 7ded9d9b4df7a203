export { loadAgents, type SpanPlacement, withCompactionSpan } from './agents-tracing.js';
export {
  agentToolSchemas,
  type CompactionInputFilterOptions,
  compactionInputFilter,
} from './compaction-input-filter.js';
export { boundaryAwareTail, CompactionSession, type CompactionSessionOptions } from './compaction-session.js';
export { type AgentsRecallToolOptions, recallTool } from './recall-tool.js';
