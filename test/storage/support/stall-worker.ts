/**
 * One process serving sessions through a shared Redis with its own CompactManager (default
 * `storeTimeoutMs`), as a child of redis-stall.test.ts. On `{ type: 'calls', from, to }` it
 * runs one preflight per turn count on its own session and on the shared one, and reports
 * how long the slowest call took and the store events it saw; on `{ type: 'shutdown' }` it
 * awaits `manager.shutdown()` and the store's `close()` and reports that they settled.
 */
import { CompactManager } from '../../../src/core/manager/compact-manager.js';
import { redisSessionStore } from '../../../src/storage/redis/index.js';
import { charCounter, chatTurns } from '../../support/background-fixtures.js';
import { reportToParent } from '../../support/report-to-parent.js';

export type StallWorkerRequest = { type: 'calls'; from: number; to: number } | { type: 'shutdown' };
export type StallWorkerReport =
  | { type: 'ready'; worker: string }
  | { type: 'calls'; worker: string; to: number; calls: number; slowestMs: number; storeEvents: string[] }
  | { type: 'closed'; worker: string };

const worker = process.env.WORKER_ID ?? String(process.pid);
const store = redisSessionStore({
  url: process.env.REDIS_URL as string,
  keyPrefix: process.env.KEY_PREFIX ?? '',
});
const manager = new CompactManager({
  maxContextTokens: 10_000,
  tokenCounter: charCounter,
  policy: { keepRecentTurns: 2, hardCapBuffer: 500 },
  store,
  summarizer: {
    name: 'quick',
    summarize: async (request) => ({ text: `${request.messages.length} folded` }),
  },
});
const storeEvents: string[] = [];
manager.on('compact.error', (event) => {
  if (event.properties.errorType === 'storage_failed') storeEvents.push('storage_failed');
});
manager.on('compact.warning', (event) => {
  if (event.properties.code === 'storage_recovered') storeEvents.push('storage_recovered');
});
const report = (message: StallWorkerReport) => reportToParent(message);
const history = chatTurns(200);

async function calls(from: number, to: number): Promise<void> {
  let slowest = 0;
  let count = 0;
  for (let turns = from; turns <= to; turns++) {
    for (const session of [`own-${worker}`, 'shared']) {
      const started = performance.now();
      await manager.compact(session, history.slice(0, 2 * turns));
      slowest = Math.max(slowest, performance.now() - started);
      count++;
    }
  }
  report({ type: 'calls', worker, to, calls: count, slowestMs: slowest, storeEvents: [...storeEvents] });
}

process.on('message', (message: StallWorkerRequest) => {
  if (message.type === 'calls') {
    calls(message.from, message.to).catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
    return;
  }
  manager
    .shutdown()
    .then(() => store.close())
    .then(() => report({ type: 'closed', worker }));
});
process.on('disconnect', () => process.exit(0));
report({ type: 'ready', worker });
