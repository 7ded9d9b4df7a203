export {
  type CompactionMiddlewareOptions,
  compactionMiddleware,
  DEFAULT_MIDDLEWARE_NAME,
  type LangChainRuntime,
  langChainToolSchemas,
} from './compaction-middleware.js';
export {
  chatToLangChain,
  LANGCHAIN_META_KEY,
  type LangChainMessageClasses,
  langChainToChat,
} from './langchain-messages.js';
