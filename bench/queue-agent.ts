/**
 * One agent process of bench/queue.ts: a CompactManager over the shared Redis store with
 * `background: true`, its preparations on the BullMQ queue when `QUEUE_NAME` is set (else the
 * library's own cross-process preparation lock). On `{ type: 'step', session, step }` it
 * compacts the session's first `step` turns and answers with the time the call took and the
 * summary it answered with; on `{ type: 'end', session }` it ends the session
 * (`manager.endSession`, as an application does when a conversation closes); on
 * `{ type: 'stats' }` with its counters.
 */
import { CompactManager } from '../src/core/manager/compact-manager.js';
import type { SummarizeRequest } from '../src/core/summary/summarizer.js';
import { bullmqPreparationQueue } from '../src/queue/index.js';
import { redisSessionStore } from '../src/storage/redis/index.js';
import { previousMark } from '../test/queue/support/queue-worker-mark.js';
import { charCounter, chatTurns } from '../test/support/background-fixtures.js';

/** Messages from an agent to the bench. */
export type QueueAgentReport =
  | { type: 'ready'; agent: string }
  | { type: 'ended'; agent: string; session: string }
  | {
      type: 'done';
      agent: string;
      session: string;
      step: number;
      ms: number;
      version: number;
      applied: boolean;
      summary: string | undefined;
      summarizer: string | undefined;
    }
  | {
      type: 'stats';
      agent: string;
      ownSummarizerCalls: number;
      status: ReturnType<CompactManager['backgroundStatus']>;
    };

const agent = process.env.AGENT_ID ?? String(process.pid);
const url = process.env.REDIS_URL as string;
const store = redisSessionStore({ url, keyPrefix: process.env.KEY_PREFIX ?? '' });
const queue = process.env.QUEUE_NAME
  ? bullmqPreparationQueue({ connection: url, name: process.env.QUEUE_NAME })
  : undefined;
if (queue && process.env.QUEUE_BENCH_DEBUG) {
  const enqueue = queue.enqueue.bind(queue);
  Object.assign(queue, {
    enqueue: async (job: Parameters<typeof enqueue>[0]) => {
      console.log(`${agent} enqueue ${job.sessionId} v${job.baseVersion} at ${Date.now()}`);
      await enqueue(job).catch((error: unknown) => console.log(`${agent} enqueue failed ${String(error)}`));
      console.log(`${agent} enqueued ${job.sessionId} v${job.baseVersion} at ${Date.now()}`);
    },
  });
}
let ownSummarizerCalls = 0;
const manager = new CompactManager({
  maxContextTokens: 10_000,
  tokenCounter: charCounter,
  policy: { hardCapBuffer: 500 },
  store,
  storeTimeoutMs: 10_000,
  background: true,
  preparationLead: process.env.PREPARATION_LEAD === 'fixed' ? 'fixed' : 'learned',
  ...(queue ? { preparationQueue: queue } : {}),
  summarizer: {
    name: `agent-${agent}`,
    summarize: async (request: SummarizeRequest) => {
      ownSummarizerCalls++;
      await new Promise((resolve) => setTimeout(resolve, Number(process.env.SUMMARIZE_MS ?? 0)));
      const ids = request.messages.map((m) => m.id);
      return {
        text: `${request.keep ?? '## Task'}\n- by agent-${agent} ${previousMark(request.previousSummary)}: ${ids.length} messages, ${ids[0]} to ${ids.at(-1)}`,
      };
    },
  },
});
const histories = new Map<string, Record<string, unknown>[]>();
// Stamped here (epoch ms): an \`ended\` report's time is its session's close in bench/queue.ts.
const report = (message: QueueAgentReport) => process.send?.({ ...message, at: Date.now() });

type Command =
  | { type: 'step'; session: string; step: number }
  | { type: 'stats' }
  | { type: 'end'; session: string };

process.on('message', (message: Command) => {
  if (message.type === 'stats') {
    report({ type: 'stats', agent, ownSummarizerCalls, status: manager.backgroundStatus() });
    return;
  }
  if (message.type === 'end') {
    // The conversation is over: its waiting preparation job is withdrawn (nothing will use it).
    manager.endSession(message.session, { closed: true });
    report({ type: 'ended', agent, session: message.session });
    return;
  }
  const { session, step } = message;
  const history = histories.get(session) ?? chatTurns(Number(process.env.STEPS ?? 120), 100, session);
  histories.set(session, history);
  const start = performance.now();
  manager.compact(session, history.slice(0, 2 * step)).then(
    (result) =>
      report({
        type: 'done',
        agent,
        session,
        step,
        ms: performance.now() - start,
        version: result.version,
        applied: result.applied,
        summary: result.summary?.text,
        summarizer: result.summary?.summarizer,
      }),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
process.on('disconnect', () => {
  void manager
    .shutdown()
    .then(() => queue?.close())
    .then(() => store.close())
    .finally(() => process.exit(0));
});
// Warm: the store's connection and the first preflight's compilation, before the bench's clock.
await manager.compact(`warm-${agent}`, chatTurns(2));
report({ type: 'ready', agent });
