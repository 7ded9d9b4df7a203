import { randomUUID } from 'node:crypto';
import { describeCause } from '../../core/describe-cause.js';
import { CompactError } from '../../core/errors.js';
import type {
  RevisedState,
  SessionLock,
  SessionState,
  SessionStore,
  SessionStoreSetOptions,
} from '../../core/session/session-store.js';
import {
  checkSessionId,
  checkState,
  checkTtl,
  checkWriteOptions,
  storedStateProblem,
} from '../../core/session/session-store-checks.js';
import {
  ACQUIRE_SCRIPT,
  DELETE_SCRIPT,
  GET_IF_CHANGED_SCRIPT,
  GET_SCRIPT,
  RELEASE_SCRIPT,
  RENEW_SCRIPT,
  type RedisScript,
  SET_ASIDE_SCRIPT,
  SET_SCRIPT,
} from './redis-scripts.js';

/** Arguments of a script call, as node-redis (`redis` 4 and later) takes them. */
export interface RedisEvalOptions {
  keys: string[];
  arguments: string[];
}

/**
 * The two commands the store needs from a client: a connected `redis` (node-redis 4 or
 * later) client or cluster satisfies it.
 */
export interface RedisScriptClient {
  eval(script: string, options: RedisEvalOptions): Promise<unknown>;
  evalSha(sha1: string, options: RedisEvalOptions): Promise<unknown>;
}

/** Options of {@link redisSessionStore}: a `client` you own, or a `url` to connect to. */
export interface RedisSessionStoreOptions {
  /**
   * A connected node-redis client (`createClient(...)` after `connect()`). The store never
   * closes it. Takes precedence over `url`.
   * @default undefined
   */
  client?: RedisScriptClient;
  /**
   * A Redis URL (`redis://user:pass@host:6379/0`, `rediss://...`): the store creates a
   * client with the `redis` package on first use and closes it in `close()`.
   * @default undefined
   */
  url?: string;
  /**
   * Prefix of the session keys: session `s` lives in the hash `{keyPrefix}s`.
   * @default 'agent-compaction:session:'
   */
  keyPrefix?: string;
  /**
   * How long `close()` waits for the commands in flight before it drops the connection (a
   * stalled or unreachable server never answers them): `close()` settles within this bound
   * whatever state the server is in.
   * @default 1000
   */
  closeTimeoutMs?: number;
}

/** The default bound of {@link RedisSessionStore.close}. */
export const DEFAULT_REDIS_CLOSE_TIMEOUT_MS = 1_000;

/** A {@link SessionStore} kept in Redis. */
export interface RedisSessionStore extends SessionStore {
  /**
   * Closes the client the store created from `url` (a given client stays open): waits for
   * the commands in flight up to `closeTimeoutMs`, then drops the connection.
   */
  close(): Promise<void>;
}

/** The parts of a node-redis client the store uses when it creates one. */
interface OwnedClient extends RedisScriptClient {
  connect(): Promise<unknown>;
  close?(): Promise<unknown>;
  quit?(): Promise<unknown>;
  /** node-redis 5 (`disconnect` in 4): drops the connection, rejecting the commands in flight. */
  destroy?(): void;
  disconnect?(): Promise<unknown>;
  on(event: 'error', listener: (error: unknown) => void): unknown;
}

/** Connects (once) to `url` with the optional `redis` peer; `onError` gets the client's errors. */
async function connect(url: string, onError: (error: unknown) => void): Promise<OwnedClient> {
  let redis: typeof import('redis');
  try {
    redis = await import('redis');
  } catch (error) {
    throw new CompactError('missing_dependency', 'install redis: npm i redis', { cause: error });
  }
  let connected = false;
  const client = redis.createClient({
    url,
    socket: {
      connectTimeout: 5000,
      // Fail the first connection at once; once connected, reconnect with a capped backoff.
      reconnectStrategy: (retries: number, cause: Error) =>
        connected ? Math.min(50 * 2 ** retries, 2000) : cause,
    },
  }) as unknown as OwnedClient;
  // node-redis reconnects by itself; without a listener an 'error' event would end the process.
  client.on('error', onError);
  await client.connect();
  connected = true;
  return client;
}

/** Runs the store's scripts on one session's key: `EVALSHA`, then `EVAL` when the server lost the script. */
function scriptRunner(options: RedisSessionStoreOptions) {
  const prefix = options.keyPrefix ?? 'agent-compaction:session:';
  let owned: Promise<OwnedClient> | undefined;
  let lastError: unknown;
  const clientOf = async (): Promise<RedisScriptClient> => {
    const given = options.client;
    if (given) {
      if ((given as { isReady?: boolean }).isReady === false) throw new Error('not connected');
      return given;
    }
    if (!owned) {
      owned = connect(options.url as string, (error) => {
        lastError = error;
      });
      owned.catch(() => {
        owned = undefined;
      });
    }
    const client = await owned;
    // While the client reconnects, commands would wait in its queue: fail at once with the cause.
    if ((client as { isReady?: boolean }).isReady === false)
      throw new Error(`not connected (${describeCause(lastError ?? 'reconnecting')})`);
    return client;
  };
  const run = async (script: RedisScript, sessionId: string, args: string[]): Promise<unknown> => {
    const call = { keys: [prefix + sessionId], arguments: args };
    try {
      const client = await clientOf();
      try {
        return await client.evalSha(script.sha1, call);
      } catch (error) {
        if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
        return await client.eval(script.source, call);
      }
    } catch (error) {
      if (error instanceof CompactError) throw error;
      throw new CompactError('storage_failed', `redis: ${describeCause(error)}`, {
        cause: error,
      });
    }
  };
  /** Drops a client's connection at once (its commands in flight reject). */
  const drop = (client: OwnedClient) => {
    try {
      if (client.destroy) client.destroy();
      else void client.disconnect?.call(client).catch(() => {});
    } catch {
      // already closed
    }
  };
  const close = async () => {
    const pending = owned;
    owned = undefined;
    if (!pending) return;
    const bound = options.closeTimeoutMs ?? DEFAULT_REDIS_CLOSE_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), bound);
    });
    try {
      // A connection still being made is dropped as soon as it is made.
      const client = await Promise.race([pending.catch(() => undefined), late]);
      if (client === 'late') {
        void pending.then(drop, () => {});
        return;
      }
      if (!client) return;
      // A graceful close waits for the commands in flight, which a stalled server never answers.
      const closing = Promise.resolve((client.close ?? client.quit)?.call(client)).catch(() => undefined);
      if ((await Promise.race([closing, late])) === 'late') drop(client);
    } finally {
      clearTimeout(timer);
    }
  };
  return { run, close };
}

/** Refuses options with neither a client nor a url, or a bad `closeTimeoutMs`, naming the field. */
function checkStoreOptions(options: RedisSessionStoreOptions): void {
  if (!options || (options.client === undefined && (typeof options.url !== 'string' || options.url === ''))) {
    throw new CompactError('invalid_config', 'redisSessionStore: give a connected client or a url', {
      issues: [{ path: ['store', 'url'], message: 'give a connected client or a non-empty url' }],
    });
  }
  const closeTimeoutMs = options.closeTimeoutMs;
  if (
    closeTimeoutMs !== undefined &&
    (typeof closeTimeoutMs !== 'number' || !Number.isFinite(closeTimeoutMs) || closeTimeoutMs < 0)
  ) {
    throw new CompactError('invalid_config', 'redisSessionStore: closeTimeoutMs must be a number >= 0', {
      issues: [{ path: ['store', 'closeTimeoutMs'], message: 'must be a number of milliseconds >= 0' }],
    });
  }
}

/**
 * Session state, locks and fencing tokens in Redis, shared by every process that uses the
 * same server and `keyPrefix`: state survives restarts, and processes serving one session
 * compact it once per trigger. Each operation is one Lua script on one hash per session
 * (see `redis-scripts.ts`), so compare-and-set, fencing and lock expiry are atomic; lock
 * times come from the Redis server's clock. `redis` is an optional peer, imported only when
 * a `url` is given. Use Redis persistence (RDB/AOF) if state must survive a Redis restart.
 *
 * @example
 * ```ts
 * import { redisSessionStore } from 'agent-compaction/storage/redis';
 * const store = redisSessionStore({ url: process.env.REDIS_URL });
 * const manager = new CompactManager({ model: 'gpt-4o', store });
 * ```
 */
export function redisSessionStore(options: RedisSessionStoreOptions): RedisSessionStore {
  checkStoreOptions(options);
  const { run, close } = scriptRunner(options);
  const prefix = options.keyPrefix ?? 'agent-compaction:session:';
  const lockOf = (sessionId: string, token: number, ttlMs: number): SessionLock => ({
    sessionId,
    token,
    renew: async (renewTtlMs = ttlMs) => {
      checkTtl(renewTtlMs);
      return Number(await run(RENEW_SCRIPT, sessionId, [String(token), String(renewTtlMs)])) === 1;
    },
    release: async () => Number(await run(RELEASE_SCRIPT, sessionId, [String(token)])) === 1,
  });

  /** The state stored as `json`, checked; a corrupt one is set aside and raises `corrupt_state`. */
  const parsed = async (sessionId: string, json: unknown): Promise<SessionState> => {
    let state: unknown;
    let problem: string | undefined;
    try {
      state = JSON.parse(String(json));
      problem = storedStateProblem(state);
    } catch {
      problem = 'is not JSON';
    }
    if (problem === undefined) return state as SessionState;
    // Kept aside (field `corrupt` of the session's hash) and forgotten: the session goes on as new.
    await run(SET_ASIDE_SCRIPT, sessionId, [String(json)]);
    throw new CompactError(
      'corrupt_state',
      `redis: the stored state of session ${JSON.stringify(sessionId)} ${problem}; it was moved to the field "corrupt" of ${JSON.stringify(prefix + sessionId)} and the session starts over`,
    );
  };

  return {
    name: 'redis',
    async get(sessionId: string): Promise<SessionState | undefined> {
      checkSessionId(sessionId);
      const json = await run(GET_SCRIPT, sessionId, []);
      if (json === null || json === undefined) return undefined;
      return parsed(sessionId, json);
    },
    async getIfChanged(sessionId: string, revision?: string): Promise<RevisedState> {
      checkSessionId(sessionId);
      const [now, kind, json] = (await run(GET_IF_CHANGED_SCRIPT, sessionId, [revision ?? ''])) as unknown[];
      const answer: RevisedState = { revision: String(now) };
      if (Number(kind) === 0) answer.unchanged = true;
      else if (Number(kind) === 2) answer.state = await parsed(sessionId, json);
      return answer;
    },
    async set(
      sessionId: string,
      state: SessionState,
      setOptions: SessionStoreSetOptions = {},
    ): Promise<boolean> {
      checkSessionId(sessionId);
      checkState(state);
      checkWriteOptions(setOptions);
      const args = [
        JSON.stringify(state),
        String(state.version),
        setOptions.expectedVersion === undefined ? '' : String(setOptions.expectedVersion),
        setOptions.fencingToken === undefined ? '' : String(setOptions.fencingToken),
        randomUUID(),
      ];
      return Number(await run(SET_SCRIPT, sessionId, args)) === 1;
    },
    async delete(sessionId: string): Promise<void> {
      checkSessionId(sessionId);
      await run(DELETE_SCRIPT, sessionId, []);
    },
    async acquireLock(sessionId: string, ttlMs: number): Promise<SessionLock | undefined> {
      checkSessionId(sessionId);
      checkTtl(ttlMs);
      const token = Number(await run(ACQUIRE_SCRIPT, sessionId, [String(ttlMs)]));
      return token > 0 ? lockOf(sessionId, token, ttlMs) : undefined;
    },
    close,
  };
}
