/**
 * The pieces of the queue tests and bench: worker child processes (queue-worker.ts) with
 * their reports, and agent managers with their own Redis clients (store and queue), as
 * separate processes would have.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { CompactManager, type CompactManagerOptions } from '../../../src/core/manager/compact-manager.js';
import type { SummarizeRequest } from '../../../src/core/summary/summarizer.js';
import {
  type BullmqPreparationQueue,
  bullmqPreparationQueue,
  type PreparationWorkerStatus,
} from '../../../src/queue/index.js';
import { type RedisSessionStore, redisSessionStore } from '../../../src/storage/redis/index.js';
import { ReportInbox } from '../../storage/support/report-inbox.js';
import { charCounter, chatTurns } from '../../support/background-fixtures.js';
import type { QueueWorkerReport } from './queue-worker.js';

const WORKER = new URL('./queue-worker.ts', import.meta.url).pathname;

/** Worker processes of one test, and what they reported. */
export class WorkerFleet {
  readonly inbox = new ReportInbox<QueueWorkerReport>();
  readonly children = new Map<string, ChildProcess>();
  readonly #env: Record<string, string>;

  constructor(env: { REDIS_URL: string; KEY_PREFIX: string; QUEUE_NAME: string }) {
    this.#env = env;
  }

  /** Starts worker `id` (env: MODE, SUMMARIZE_MS, CLOCK_SKEW_MS, STALLED_MS, LOCK_MS, MAX_STALLED, TIMEOUT_MS, CONCURRENCY); resolves once it listens. */
  async start(id: string, env: Record<string, string> = {}): Promise<ChildProcess> {
    const child = fork(WORKER, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...this.#env, ...env, WORKER_ID: id },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (report: QueueWorkerReport) => this.inbox.push(report));
    this.children.set(id, child);
    await this.inbox.until((r) => r.type === 'ready' && r.worker === id);
    return child;
  }

  /** SIGKILLs worker `id` (a crash: no cleanup) and resolves once it is gone. */
  async kill(id: string): Promise<void> {
    const child = this.children.get(id);
    this.children.delete(id);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Reports of one type. */
  of<T extends QueueWorkerReport['type']>(type: T): Extract<QueueWorkerReport, { type: T }>[] {
    return this.inbox.reports.filter((r): r is Extract<QueueWorkerReport, { type: T }> => r.type === type);
  }

  /** Worker `id`'s status (asked over IPC). */
  async status(id: string): Promise<PreparationWorkerStatus> {
    const since = this.inbox.reports.length;
    this.children.get(id)?.send({ type: 'status' });
    const answer = await this.inbox.until(
      (r) => r.type === 'status' && r.worker === id && this.inbox.reports.indexOf(r) >= since,
    );
    return (answer as Extract<QueueWorkerReport, { type: 'status' }>).status;
  }

  /** Resolves once `count` reports match. */
  async untilCount(match: (report: QueueWorkerReport) => boolean, count: number): Promise<void> {
    await this.inbox.until(() => this.inbox.reports.filter(match).length >= count);
  }

  /** Stops every worker (graceful: disconnect; SIGKILL after 5 s). */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.children.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const force = setTimeout(() => child.kill('SIGKILL'), 5000);
            child.once('exit', () => {
              clearTimeout(force);
              resolve();
            });
            if (child.connected) child.disconnect();
          }),
      ),
    );
    this.children.clear();
  }
}

/** An agent: a manager with its own store and queue clients, and its own summarizer's calls. */
export interface Agent {
  readonly manager: CompactManager;
  readonly store: RedisSessionStore;
  readonly queue: BullmqPreparationQueue;
  readonly calls: string[];
  close(): Promise<void>;
}

/** An agent on `url` whose preparations go to queue `name` (10,000-token window, 1 token a character). */
export function startAgent(
  url: string,
  keyPrefix: string,
  name: string,
  extra: Partial<CompactManagerOptions> = {},
): Agent {
  const store = redisSessionStore({ url, keyPrefix });
  const queue = bullmqPreparationQueue({ connection: url, name, attempts: 3, backoffMs: 50 });
  const calls: string[] = [];
  const manager = new CompactManager({
    maxContextTokens: 10_000,
    tokenCounter: charCounter,
    policy: { hardCapBuffer: 500 },
    store,
    storeTimeoutMs: 10_000,
    preparationQueue: queue,
    summarizer: {
      name: 'agent-summarizer',
      summarize: async (request: SummarizeRequest) => {
        calls.push(request.sessionId);
        return { text: `by the agent: ${request.messages.length} messages` };
      },
    },
    ...extra,
  });
  return {
    manager,
    store,
    queue,
    calls,
    async close() {
      await manager.shutdown();
      await queue.close();
      await store.close();
    },
  };
}

/** Resolves once the agent's background work (redaction and the queue's add) is done. */
export async function settled(agent: Agent): Promise<void> {
  while (agent.manager.backgroundStatus().running > 0) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * A chat of 36 turns (`chatTurns`, `tag` telling one conversation from another): past an
 * agent's prepareAtPct (7,000 of its 10,000 tokens), under its trigger.
 */
export function crossedTurns(tag = ''): Record<string, unknown>[] {
  return chatTurns(200, 100, tag).slice(0, 72);
}

/** The same chat at 45 turns: past the agent's trigger (8,500 tokens). */
export function triggeredTurns(tag = ''): Record<string, unknown>[] {
  return chatTurns(200, 100, tag).slice(0, 90);
}
