/**
 * `agent-compaction/queue`: summaries prepared on a BullMQ job queue, by workers inside the
 * agents' processes or apart from them (see docs/queue.md). `bullmq` (with `ioredis`) is an
 * optional peer, imported on first use.
 */

export type { PreparationJobResult } from '../core/background/run-preparation-job.js';
export type { PreparationJob, PreparationQueue } from '../core/queues/preparation-queue.js';
export { preparationJobId } from '../core/queues/preparation-queue.js';
export {
  type BullmqPreparationQueue,
  type BullmqPreparationQueueOptions,
  bullmqPreparationQueue,
  DEFAULT_PREPARATION_QUEUE_NAME,
  type PreparationQueueCounts,
} from './bullmq-preparation-queue.js';
export type { QueueConnection } from './load-bullmq.js';
export { startPreparationWorker } from './preparation-worker.js';
export {
  DEFAULT_WORKER_CONCURRENCY,
  type PreparationJobOutcome,
  type PreparationWorker,
  type PreparationWorkerMargins,
  type PreparationWorkerOptions,
  type PreparationWorkerStatus,
} from './preparation-worker-options.js';
