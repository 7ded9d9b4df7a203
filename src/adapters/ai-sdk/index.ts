export {
  AI_SDK_OPTIONS_KEY,
  type AiSdkMessage,
  type AiSdkMessageKind,
  type AiSdkPart,
  aiSdkToChat,
  chatToAiSdk,
  toolOutputText,
} from './ai-sdk-messages.js';
export {
  type CompactionMiddlewareOptions,
  type CompactionPrepareStep,
  type CompactionPrepareStepOptions,
  type CompactMessagesOptions,
  compactionMiddleware,
  compactionPrepareStep,
  compactMessages,
} from './compaction-middleware.js';
export { type AiSdkRecallToolOptions, RecallToolCallError, recallTool } from './recall-tool.js';
export { callToolSchemas } from './tool-set-schemas.js';
