/**
 * agent-compaction: keeps long-running LLM agent conversations inside the model's context
 * window. The main entry loads no SDK; integrations live in subpath exports
 * (`agent-compaction/openai-agents`, `/ai-sdk`, `/anthropic`, `/otel`, `/s3`, ...).
 */
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
  DEFAULT_MAX_CONTEXT_TOKENS,
  DEFAULT_MODEL,
  DEFAULT_SUMMARIZER_TIMEOUT_MS,
  type PreflightOptions,
  type ReportedUsage,
  type TokenEstimate,
} from './core/compact-manager.js';
export {
  ANTHROPIC_IMAGE_RULE,
  DEFAULT_IMAGE_DIMENSIONS,
  GEMINI_IMAGE_RULE,
  type ImageDimensions,
  type ImageRule,
  imageDimensions,
  imageRuleFor,
  imageTokens,
  OPENAI_TILE_RULE,
} from './core/counting/count-image.js';
export {
  DEFAULT_DOCUMENT_PAGES,
  ENCRYPTED_CHARS_PER_TOKEN,
  mediaTokens,
  PDF_PAGE_TOKENS,
} from './core/counting/count-media.js';
export {
  closestModelName,
  MODEL_FAMILIES,
  type ModelFamily,
  type ModelProvider,
  normalizeModelName,
  UNKNOWN_MODEL_CONTEXT_WINDOW,
} from './core/counting/model-table.js';
export {
  type CalibratedCount,
  type CalibrationState,
  countFromLastUsage,
  DEFAULT_CALIBRATION_OPTIONS,
  type LastUsageInput,
  UsageCalibration,
  type UsageCalibrationOptions,
  type UsageSample,
} from './core/counting/usage-calibration.js';
export { EmbeddedSummarizer } from './core/embedded-summarizer.js';
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
} from './core/events.js';
export { DEFAULT_EXPORT_QUEUE_OPTIONS, ExportQueue, type ExportQueueOptions } from './core/export-queue.js';
export { anthropicCodec } from './core/formats/anthropic.js';
export { detectFormat, MESSAGE_CODECS } from './core/formats/detect-format.js';
export { type ImageDetail, type MediaPart, mediaParts } from './core/formats/media-parts.js';
export type { MessageCodec, ParsedMessage } from './core/formats/message-codec.js';
export { openaiChatCodec } from './core/formats/openai-chat.js';
export { openaiResponsesCodec } from './core/formats/openai-responses.js';
export {
  type CompactMessage,
  formatSummaryText,
  type MessageFormat,
  type MessageKind,
  type MessageMeta,
  type MessageRole,
  SUMMARY_CLOSING_TAG,
  SUMMARY_TAG_PATTERN,
  summaryBody,
  summaryTag,
  summaryVersionOf,
  type ToolCall,
  type ToolResult,
  type WithMeta,
} from './core/message.js';
export { type CompactPolicy, DEFAULT_POLICY, resolvePolicy } from './core/policy.js';
export {
  compileRedactionPattern,
  createRedactor,
  DEFAULT_REDACTION_PATTERNS,
  REDACTED,
  type Redactor,
  type RedactorOptions,
  redactDeep,
  redactThenClip,
} from './core/redactor.js';
export {
  type WaitForSessionLockOptions,
  type WithSessionLockOptions,
  type WithSessionLockResult,
  waitForSessionLock,
  withSessionLock,
} from './core/session-lock.js';
export {
  MemorySessionStore,
  type SessionLock,
  type SessionRewrite,
  type SessionState,
  type SessionStore,
  type SessionStoreSetOptions,
  type SessionSummary,
} from './core/session-store.js';
export type { ArchivedArtifact, ArchivedSummary, StorageAdapter } from './core/storage-adapter.js';
export {
  STRATEGY_NAMES,
  type StrategyName,
  type SummarizeRequest,
  type SummarizeResult,
  type Summarizer,
  type SummarizerCircuitReport,
  type SummarizerErrorReport,
} from './core/summarizer.js';
export {
  checkSummaryOutput,
  defuseSummaryMarkup,
  describeSummaryRejection,
  findLibraryTags,
  guardSummaryOutput,
  type LibraryTagMatch,
  type SummaryCheck,
  type SummaryCheckOptions,
  SummaryRejectedError,
  type SummaryRejection,
  summaryRejectionOf,
  summarySourceText,
} from './core/summary-guard.js';
export {
  BpeTokenCounter,
  type BpeTokenCounterOptions,
  countInSlices,
  DEFAULT_ESTIMATE_MARGIN,
  DEFAULT_SLICE_CHARS,
  type EncodingName,
  formatToolSchemas,
  type ModelInfo,
  modelInfo,
  OPENAI_MESSAGE_OVERHEAD,
  type TokenCounter,
  tokenCounterFor,
} from './core/token-counter.js';
export {
  type AriadneExporterOptions,
  type AriadneSpanEvent,
  type AriadneTraceEvent,
  ariadneExporter,
  DEFAULT_ARIADNE_OPTIONS,
  splitAriadneBatches,
  toAriadneSpan,
} from './exporters/ariadne/index.js';
export {
  type ConsoleExporterOptions,
  consoleExporter,
  DEFAULT_CONSOLE_OPTIONS,
  formatEventLine,
} from './exporters/console/index.js';
export { defineExporter, type ExporterDefinition } from './exporters/define-exporter.js';
export { type ExportPrivacyOptions, hashSessionId } from './exporters/event-utils.js';
export {
  ARTIFACT_REF_PATTERN,
  isArtifactRef,
} from './storage/artifact-ref.js';
export { DEFAULT_FS_STORAGE_OPTIONS, type FsStorageOptions, fsStorage } from './storage/fs/index.js';
export { type MemoryArchiveSession, type MemoryStorage, memoryStorage } from './storage/memory/index.js';
export { ARCHIVE_NAMES, safeSessionSegment } from './storage/session-path.js';
export * from './summarizers/index.js';
