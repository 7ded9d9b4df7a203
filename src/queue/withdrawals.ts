/**
 * Withdrawals of running jobs, told across the fleet. An agent that withdraws a job a worker
 * is running (its conversation closed, or the session moved past its version) publishes the
 * job's id on `<prefix>:<name>:ac-withdrawn` with the withdrawal mark (fleet-schedule.ts);
 * each worker listens on a connection of its own and cancels that job's run (BullMQ
 * `cancelJob`: the processor's signal aborts the summarizer call, the job ends `superseded`
 * with `cancelled`, never retried). A message missed (the connection down meanwhile) costs
 * only the cancellation: the run's publish is still fenced by the session's version.
 */

/** The abort reason of a run cancelled because its agent withdrew the job. */
export const WITHDRAWN_REASON = 'agent-compaction: the job was withdrawn by its agent';

/** The channel's name in the schedule's key space (BullMQ's `toKey`). */
export const WITHDRAWN_CHANNEL = 'ac-withdrawn';

/** What the listener needs of a Redis client (ioredis, as BullMQ's backend wraps it). */
interface Subscriber {
  subscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  disconnect(): void;
}

/** A client that opens a second connection like its own (ioredis `duplicate`). */
export interface DuplicableClient {
  duplicate(): unknown;
}

/**
 * Listens on `channel` on a duplicate of `client`'s connection and calls `cancel` with each
 * withdrawn job's id; resolves with the function that stops listening. Never throws: a worker
 * that cannot listen runs as before (its runs are fenced at publish).
 */
export async function listenForWithdrawals(
  client: Promise<DuplicableClient>,
  channel: string,
  cancel: (jobId: string) => void,
): Promise<() => void> {
  let subscriber: Subscriber;
  try {
    subscriber = (await client).duplicate() as Subscriber;
  } catch {
    return () => {};
  }
  // Reconnects (and subscribes again) on its own; an error must not crash the process.
  subscriber.on('error', () => {});
  subscriber.on('message', (from, jobId) => {
    if (from === channel) cancel(jobId);
  });
  subscriber.subscribe(channel).catch(() => {});
  return () => subscriber.disconnect();
}

/** True when `signal` was aborted because the job's agent withdrew it. */
export function withdrawnWhileRunning(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && signal.reason === WITHDRAWN_REASON;
}
