/**
 * The Redis side of a queue test file: one redis-server for the file's tests (skipped with a
 * notice without one, `redisAvailable`), and for each test fresh queues and key prefixes with
 * their worker fleets and agents, stopped and closed after the test.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { CompactManagerOptions } from '../../../src/core/manager/compact-manager.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../../support/redis-server.js';
import { type Agent, startAgent, WorkerFleet } from './queue-fleet.js';

/** One fresh queue and key prefix of a test, with its worker fleet (no worker started yet). */
export interface QueueScene {
  /** The queue's name, `q-<uuid>`. */
  readonly queue: string;
  /** `<prefix>:<uuid>:`, or the one asked for. */
  readonly keyPrefix: string;
  readonly fleet: WorkerFleet;
  /** An agent on this queue and key prefix (`startAgent`), closed after the test. */
  agent(extra?: Partial<CompactManagerOptions>): Agent;
}

/** What {@link queueTestRedis} gives a test file. */
export interface QueueTestRedis {
  /** True when redis-server is on PATH: the file's suites run with `describe.runIf(available)`. */
  readonly available: boolean;
  /** The file's server, started before its first test. */
  readonly server: RedisTestServer;
  /** Stops the server and starts an empty one on the same port (a Redis restart). */
  restart(): Promise<void>;
  /**
   * A fresh queue with its fleet, stopped after the test; the key prefix `prefix`, then a uuid,
   * unless `keyPrefix` is given.
   */
  scene(prefix: string, keyPrefix?: string): QueueScene;
  /** Has `resource` closed after the test, once the fleets are stopped; returns it. */
  closeAfter<T extends { close(): Promise<unknown> }>(resource: T): T;
}

/**
 * Registers the file's hooks (`beforeAll`, `afterEach`, `afterAll`): call it once at the top
 * of a queue test file. `suite` names it in the notice when redis-server is missing.
 */
export function queueTestRedis(suite: string): QueueTestRedis {
  const available = redisAvailable(suite);
  let server: RedisTestServer | undefined;
  const fleets: WorkerFleet[] = [];
  const open: { close(): Promise<unknown> }[] = [];
  const started = (): RedisTestServer => {
    if (!server) throw new Error(`${suite}: the redis-server is not started (outside a test?)`);
    return server;
  };
  const closeAfter = <T extends { close(): Promise<unknown> }>(resource: T): T => {
    open.push(resource);
    return resource;
  };

  beforeAll(async () => {
    if (available) server = await startRedisServer();
  });
  afterEach(async () => {
    await Promise.all(fleets.splice(0).map((fleet) => fleet.stop()));
    await Promise.all(open.splice(0).map((resource) => resource.close()));
  });
  afterAll(async () => {
    await server?.stop();
  });

  return {
    available,
    get server() {
      return started();
    },
    async restart() {
      const { port } = started();
      await started().stop();
      server = await startRedisServer({ port });
    },
    scene(prefix, keyPrefix = `${prefix}:${randomUUID()}:`) {
      const { url } = started();
      const queue = `q-${randomUUID()}`;
      const fleet = new WorkerFleet({ REDIS_URL: url, KEY_PREFIX: keyPrefix, QUEUE_NAME: queue });
      fleets.push(fleet);
      return {
        queue,
        keyPrefix,
        fleet,
        agent: (extra = {}) => closeAfter(startAgent(url, keyPrefix, queue, extra)),
      };
    },
    closeAfter,
  };
}
