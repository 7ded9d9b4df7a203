/**
 * agent-compaction: keeps long-running LLM agent conversations inside the model's context
 * window. This entry is the documented core: {@link CompactManager} with its options and
 * results, errors, events, message types, the summarizer contract with the embedded
 * summarizer, the archive and session-store contracts with their in-memory implementations,
 * and redaction. It loads no SDK; everything else is a subpath export:
 * `agent-compaction/openai-agents`, `/ai-sdk`, `/anthropic` (integrations), `/summarizers`
 * and `/summarizers/<provider>` (LLM summarizers), `/exporters` and `/otel` (tracing),
 * `/storage/fs`, `/storage/s3`, `/storage/redis` (archives and shared stores), `/counting`
 * (model table and token counting), `/config`, `/recall`, `/testing`.
 *
 * @example
 * ```ts
 * import { CompactManager } from 'agent-compaction';
 * const manager = new CompactManager({ model: 'gpt-4o' });
 * const messages = await manager.preflight(sessionId, history, { tools });
 * ```
 *
 * @packageDocumentation
 */

export type {
  ArchivedArtifact,
  ArchivedSummary,
  ArchiveWriteOptions,
  StorageAdapter,
} from './core/archive/storage-adapter.js';
export { type CompactMessagesOptions, compactMessages } from './core/compact-messages.js';
export {
  type CachePrice,
  DEFAULT_CACHE_PRICES,
  type SessionCost,
} from './core/counting/session-cost.js';
export type { TokenCounter } from './core/counting/token-counter.js';
export {
  CompactError,
  type CompactErrorCode,
  type CompactErrorOptions,
  type CompactIssue,
  isCompactError,
} from './core/errors.js';
export {
  type AnyCompactEvent,
  COMPACT_EVENT_NAMES,
  type CompactEvent,
  type CompactEventListener,
  type CompactEventName,
  type CompactEventProperties,
  type EventExporter,
  type KeptCounts,
  type PolicySnapshot,
  type TokenBreakdown,
} from './core/events/events.js';
export type { ExportQueueOptions } from './core/events/export-queue.js';
export {
  type AgentCompactorOptions,
  agentStateKey,
  type BackgroundStatus,
  type CompactionResult,
  type CompactionSummary,
  CompactManager,
  type CompactManagerOptions,
  type CompactOptions,
  DEFAULT_LOCK_TTL_MS,
  type PreflightOptions,
  type ReportedUsage,
  type TokenEstimate,
} from './core/manager/compact-manager.js';
export type { CacheStatus, EndSessionOptions } from './core/manager/manager-memory.js';
export type {
  CompactMessage,
  MessageFormat,
  MessageKind,
  MessageMeta,
  MessageRole,
  ToolCall,
  ToolResult,
  WithMeta,
} from './core/messages/message.js';
export type { CompactPolicy, PolicyPreset } from './core/policy.js';
export { DEFAULT_POLICY, POLICY_PRESETS } from './core/policy.js';
export type { PreparationJob, PreparationQueue } from './core/queues/preparation-queue.js';
export {
  createRedactor,
  createRedactorAsync,
  DEFAULT_REDACTION_PATTERNS,
  REDACTED,
  type Redactor,
  type RedactorOptions,
} from './core/redaction/redactor.js';
export {
  type UpdateSessionOnceOptions,
  type UpdateSessionOnceResult,
  updateSessionOnce,
  type WaitForSessionLockOptions,
  type WithSessionLockOptions,
  type WithSessionLockResult,
  waitForSessionLock,
  withSessionLock,
} from './core/session/session-lock.js';
export {
  MemorySessionStore,
  type RevisedState,
  type SessionLock,
  type SessionRewrite,
  type SessionState,
  type SessionStore,
  type SessionStoreSetOptions,
  type SessionSummary,
} from './core/session/session-store.js';
export { EmbeddedSummarizer } from './core/summary/embedded-summarizer.js';
export type {
  SentPrefix,
  StrategyName,
  SummarizeRequest,
  SummarizeResult,
  Summarizer,
  SummarizerCircuitReport,
  SummarizerErrorReport,
} from './core/summary/summarizer.js';
export { type MemoryArchiveSession, type MemoryStorage, memoryStorage } from './storage/memory/index.js';
