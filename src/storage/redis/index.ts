export {
  type RedisEvalOptions,
  type RedisScriptClient,
  type RedisSessionStore,
  type RedisSessionStoreOptions,
  redisSessionStore,
} from './redis-session-store.js';
