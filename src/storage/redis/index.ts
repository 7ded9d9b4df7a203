export {
  DEFAULT_REDIS_CLOSE_TIMEOUT_MS,
  type RedisEvalOptions,
  type RedisScriptClient,
  type RedisSessionStore,
  type RedisSessionStoreOptions,
  redisSessionStore,
} from './redis-session-store.js';
