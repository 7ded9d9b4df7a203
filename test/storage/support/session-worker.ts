/**
 * One replica serving a session through Redis, run as a child process by
 * redis-multi-process.test.ts. On each trigger it compacts the session once unless another
 * replica already did (`updateSessionOnce`: lock, read again, "summarize" (a sleep), fenced
 * compare-and-set).
 * It reports over IPC when it holds the lock and what came of the trigger.
 */
import { updateSessionOnce } from '../../../src/core/session/session-lock.js';
import { redisSessionStore } from '../../../src/storage/redis/index.js';
import { reportToParent } from '../../support/report-to-parent.js';
import { SESSION, type TriggerMessage, type WorkerReport } from './session-worker-protocol.js';

const worker = process.env.WORKER_ID ?? String(process.pid);
const store = redisSessionStore({
  url: process.env.REDIS_URL as string,
  keyPrefix: process.env.KEY_PREFIX ?? '',
});
const report = (message: WorkerReport) => reportToParent(message);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function compact(message: TriggerMessage): Promise<'wrote' | 'already' | 'refused' | 'timeout'> {
  if (((await store.get(SESSION))?.version ?? 0) >= message.trigger) return 'already';
  const options = { ttlMs: message.ttlMs, timeoutMs: 60_000, retryMs: 20, seenVersion: message.trigger - 1 };
  const since = Date.now();
  const result = await updateSessionOnce(store, SESSION, options, async (current, { lock }) => {
    report({ type: 'locked', worker, trigger: message.trigger, token: lock.token, at: Date.now(), since });
    // The summarizer. A replica that stalls here (SIGSTOP) does not look at its lock again
    // before writing: only the fencing token stands between it and the newer holder's state.
    await sleep(message.compactMs);
    return {
      sessionId: SESSION,
      version: (current?.version ?? 0) + 1,
      summary: {
        text: `trigger ${message.trigger} by ${worker}`,
        tokens: 5,
        summarizer: worker,
        createdAt: Date.now(),
      },
      coveredIds: [...(current?.coveredIds ?? []), `t${message.trigger}`],
      updatedAt: Date.now(),
    };
  });
  return result.outcome === 'current' ? 'already' : result.outcome;
}

process.on('message', (message: TriggerMessage) => {
  if (message.type !== 'trigger') return;
  compact(message).then(
    (outcome) => report({ type: 'done', worker, trigger: message.trigger, outcome }),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
process.on('disconnect', () => {
  store.close().finally(() => process.exit(0));
});
report({ type: 'ready', worker });
