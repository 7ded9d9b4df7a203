/**
 * `agent-compaction status SESSION --store redis`: what a session remembers in a shared Redis
 * session store (the state every process serving it reads): its summary version and text, the
 * messages it covers, what it pins and keeps, and when it changed; and the preparation queue's
 * jobs waiting, active, held by the fleet's schedule and failed, its lag, and when the next
 * held job is due. The URL comes from an environment variable (a URL can carry a password:
 * never on the command line).
 */
import { CompactError } from '../../core/errors.js';
import { QUEUE_SUMMARIZER_PREFIX } from '../../core/queues/preparation-queue.js';
import { unpackState } from '../../core/session/packed-state.js';
import type { SessionState } from '../../core/session/session-state.js';
import { DEFAULT_PREPARATION_QUEUE_NAME } from '../../queue/bullmq-preparation-queue.js';
import type { CliIo } from '../cli-io.js';
import { formatNumber } from '../replay/format-table.js';

/** Reads `sessionId`'s state from the Redis store at `$urlEnv`. */
export async function readStoreState(
  sessionId: string,
  env: Readonly<Record<string, string | undefined>>,
  urlEnv = 'REDIS_URL',
  keyPrefix?: string,
): Promise<SessionState> {
  const url = env[urlEnv];
  if (!url)
    throw new CompactError(
      'invalid_config',
      `--store redis reads the Redis URL from ${urlEnv}, which is not set`,
    );
  const { redisSessionStore } = await import('../../storage/redis/index.js');
  const store = redisSessionStore({ url, ...(keyPrefix === undefined ? {} : { keyPrefix }) });
  try {
    const state = await store.get(sessionId);
    if (!state) throw new CompactError('invalid_messages', `no session "${sessionId}" in the Redis store`);
    // The manager writes a long state's lists packed (packed-state.ts).
    return unpackState(state);
  } finally {
    await store.close();
  }
}

/** The state as lines of text. */
export function formatStoreState(state: SessionState): string {
  const lines = [
    `session: ${state.sessionId} (Redis store), state version ${state.version}, updated ${new Date(state.updatedAt).toISOString()}`,
    `covered by the summary: ${formatNumber(state.coveredIds.length)} messages; pinned ${formatNumber(state.pinnedIds?.length ?? 0)}; the user's words kept verbatim ${formatNumber(state.userTextIds?.length ?? 0)}; rewritten (cleared, shortened, cut) ${formatNumber(Object.keys(state.rewrites ?? {}).length)}`,
  ];
  if (state.summary) {
    const { tokens, summarizer, createdAt, text } = state.summary;
    lines.push(
      `summary v${state.version}: ${formatNumber(tokens)} tokens, ${summarizer}${summarizer.startsWith(QUEUE_SUMMARIZER_PREFIX) ? ' (prepared by a queue worker)' : ''}, ${new Date(createdAt).toISOString()}`,
    );
    for (const line of text.split('\n').slice(0, 8)) lines.push(`  ${line}`);
  } else lines.push('summary: none yet');
  return lines.join('\n');
}

/** The preparation queue's jobs by state and its lag, or why they cannot be read. */
export type QueueStatus =
  | {
      name: string;
      waiting: number;
      active: number;
      delayed: number;
      /** Delayed jobs the fleet's schedule holds until their start. */
      held: number;
      /** The earliest due time (epoch ms) of a held job. */
      nextDueAt?: number;
      failed: number;
      lagMs: number;
    }
  | { name: string; unavailable: string };

/** Reads the preparation queue `name` on the Redis at `url` (needs the bullmq and ioredis peers). */
export async function readQueueStatus(url: string, name: string): Promise<QueueStatus> {
  const { bullmqPreparationQueue } = await import('../../queue/index.js');
  const queue = bullmqPreparationQueue({ connection: url, name });
  try {
    const { waiting, active, delayed, held, nextDueAt, failed, lagMs } = await queue.counts();
    return {
      name,
      waiting,
      active,
      delayed,
      held,
      ...(nextDueAt === undefined ? {} : { nextDueAt }),
      failed,
      lagMs,
    };
  } catch (error) {
    return { name, unavailable: (error as Error).message };
  } finally {
    await queue.close().catch(() => {});
  }
}

/** The queue's line (`now`: epoch ms, for the time to the next held job's due time). */
export function formatQueueStatus(queue: QueueStatus, now = Date.now()): string {
  if ('unavailable' in queue) return `preparation queue ${queue.name}: not read (${queue.unavailable})`;
  const { name, waiting, active, delayed, held, nextDueAt, failed, lagMs } = queue;
  const next =
    nextDueAt === undefined
      ? ''
      : `; the next held job due in ${formatNumber(nextDueAt - now)} ms (${new Date(nextDueAt).toISOString()})`;
  return `preparation queue ${name}: waiting ${formatNumber(waiting)}, active ${formatNumber(active)}, held by the schedule ${formatNumber(held)}, delayed (retries) ${formatNumber(Math.max(0, delayed - held))}, failed (dead letters) ${formatNumber(failed)}; lag ${formatNumber(lagMs)} ms (the oldest waiting job)${next}`;
}

/** Prints a session's state from the store, and the preparation queue's jobs and lag (text or `--json`). */
export async function runStoreStatus(
  sessionId: string,
  flags: { json: boolean; urlEnv?: string; queue?: string },
  io: CliIo,
): Promise<void> {
  const state = await readStoreState(sessionId, io.env, flags.urlEnv);
  const queue = await readQueueStatus(
    io.env[flags.urlEnv ?? 'REDIS_URL']!,
    flags.queue ?? DEFAULT_PREPARATION_QUEUE_NAME,
  );
  io.stdout(
    flags.json
      ? `${JSON.stringify({ ...state, queue }, null, 2)}\n`
      : `${formatStoreState(state)}\n${formatQueueStatus(queue)}\n`,
  );
}
