/**
 * `npx tsx bench/queue-faults.ts` (or `npm run bench`, where `--no-queue-faults` skips it):
 * issue 46's faults on a fleet, each run on its own real redis-server on loopback. 3 agent
 * processes (test/fleet/support/fleet-agent.ts: own Redis clients, one fs archive shared by
 * all) step SESSIONS sessions together (a barrier per step, then a model call of MODEL_MS),
 * each step of a session on the next agent; 2 BullMQ worker processes
 * (test/queue/support/queue-worker.ts, concurrency 16) prepare summaries in SUMMARIZE_MS.
 * The fault hits at the middle step: none; a worker SIGKILLed mid-job; Redis SIGSTOPped for
 * 5 s; Redis restarted without persistence (a fourth agent that never held a session joins);
 * the workers' summarizer hanging (30 s) then failing on every job (a poisoned summarizer).
 *
 * Reported per run: the share of compactions that used a summary from the queue, local
 * answers (compactions the store could not grant a version to), versions sent with two
 * texts (must be 0), responses whose version went down (must be 0), calls that threw, and the
 * agents' preflight p50/p99 (the agent process's own time per call, IPC excluded).
 *
 * Size: QUEUE_FAULTS_SESSIONS (default 20), QUEUE_FAULTS_STEPS (default 40),
 * QUEUE_FAULTS_MODEL_MS (150), QUEUE_FAULTS_SUMMARIZE_MS (400).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFleet, driveFleet, FleetLedger } from '../test/fleet/support/agent-fleet.js';
import { WorkerFleet } from '../test/queue/support/queue-fleet.js';
import { redisAvailable, startRedisServer } from '../test/support/redis-server.js';

const SESSIONS = Number(process.env.QUEUE_FAULTS_SESSIONS ?? 20);
const STEPS = Number(process.env.QUEUE_FAULTS_STEPS ?? 40);
const MODEL_MS = Number(process.env.QUEUE_FAULTS_MODEL_MS ?? 150);
const SUMMARIZE_MS = Number(process.env.QUEUE_FAULTS_SUMMARIZE_MS ?? 400);
const STOP_MS = 5_000;
const HANG_MS = 30_000;

export type QueueFault =
  | 'none'
  | 'worker killed'
  | 'Redis stopped 5 s'
  | 'Redis restarted'
  | 'hang, then poisoned';
export const QUEUE_FAULTS: readonly QueueFault[] = [
  'none',
  'worker killed',
  'Redis stopped 5 s',
  'Redis restarted',
  'hang, then poisoned',
];

/** The figures of one run. */
export interface QueueFaultRun {
  fault: QueueFault;
  calls: number;
  /** Compactions stored (a version granted). */
  compactions: number;
  /** Of those, the share that used a summary a worker prepared. */
  shareFromQueue: number;
  /** Compactions answered locally (no version: the store could not grant one). */
  local: number;
  /** Session versions sent with two texts (must be 0). */
  doubled: number;
  /** Responses whose version is below one the session answered before (must be 0). */
  down: number;
  /** Calls that threw. */
  failures: number;
  p50: number;
  p99: number;
  wallMs: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One run of the fleet under `fault`. */
export async function queueFaultRun(fault: QueueFault): Promise<QueueFaultRun> {
  let server = await startRedisServer();
  const base = { REDIS_URL: server.url, KEY_PREFIX: `qf:${randomUUID()}:`, QUEUE_NAME: `qf-${randomUUID()}` };
  const archive = mkdtempSync(join(tmpdir(), 'queue-faults-'));
  const agents = new AgentFleet({ ...base, ARCHIVE_DIR: archive, TURNS: String(STEPS + 2) });
  const workers = new WorkerFleet(base);
  const ledger = new FleetLedger();
  const sessions = Array.from({ length: SESSIONS }, (_, s) => `s${s}`);
  const ids = ['a', 'b', 'c'];
  const timers: NodeJS.Timeout[] = [];
  const started = performance.now();
  try {
    await Promise.all(ids.map((id) => agents.start(id)));
    const workerEnv = {
      SUMMARIZE_MS: String(SUMMARIZE_MS),
      CONCURRENCY: '16',
      STALLED_MS: '500',
      LOCK_MS: '1000',
    };
    const hang = fault === 'hang, then poisoned';
    await workers.start('w1', hang ? { ...workerEnv, MODE: 'hang' } : workerEnv);
    await workers.start('w2', hang ? { ...workerEnv, MODE: 'hang' } : workerEnv);
    const middle = Math.floor(STEPS / 2);
    let hangEnds: Promise<void> | undefined;
    const during = async (step: number) => {
      if (step > 1) await pause(MODEL_MS);
      if (step === 1 && hang) {
        // The hang lasts 30 s of the run; then the summarizer fails on every job.
        hangEnds = pause(HANG_MS).then(async () => {
          await workers.kill('w1');
          await workers.kill('w2');
          await workers.start('p1', { ...workerEnv, MODE: 'fail' });
          await workers.start('p2', { ...workerEnv, MODE: 'fail' });
        });
      }
      if (step !== middle) return;
      if (fault === 'worker killed') {
        // Mid-job: once w1 runs a summarizer (or a few seconds without one).
        const since = workers.inbox.reports.length;
        await Promise.race([
          workers.inbox.until(
            (r) => r.type === 'summarizing' && r.worker === 'w1' && workers.inbox.reports.indexOf(r) >= since,
          ),
          pause(3_000),
        ]);
        await workers.kill('w1');
      } else if (fault === 'Redis stopped 5 s') {
        process.kill(server.pid, 'SIGSTOP');
        timers.push(setTimeout(() => process.kill(server.pid, 'SIGCONT'), STOP_MS));
      } else if (fault === 'Redis restarted') {
        const port = server.port;
        await server.stop();
        server = await startRedisServer({ port });
        await agents.start('fresh');
        ids.push('fresh');
      }
    };
    await driveFleet(
      agents,
      ledger,
      sessions,
      { from: 1, to: STEPS },
      (s, step) => ids[(s + step) % ids.length]!,
      during,
    );
    await hangEnds;
  } finally {
    for (const timer of timers) clearTimeout(timer);
    try {
      process.kill(server.pid, 'SIGCONT');
    } catch {}
    await workers.stop();
    await agents.stop();
    await server.stop();
    rmSync(archive, { recursive: true, force: true });
  }
  const figures = ledger.figures();
  return {
    fault,
    calls: ledger.sent.length,
    compactions: figures.compactions,
    shareFromQueue: figures.compactions > 0 ? figures.fromQueue / figures.compactions : 0,
    local: figures.local,
    doubled: ledger.doubled().length,
    down: ledger.down().length,
    failures: ledger.failures().length,
    p50: figures.p50,
    p99: figures.p99,
    wallMs: performance.now() - started,
  };
}

/** Every fault (or those given), one run each, each printed as it ends. */
export async function queueFaultsBench(
  faults: readonly QueueFault[] = QUEUE_FAULTS,
): Promise<QueueFaultRun[]> {
  console.log(
    `  ${SESSIONS} sessions in lockstep x ${STEPS} steps, model calls ${MODEL_MS} ms, summarizer ${SUMMARIZE_MS} ms; 3 agents, 2 workers`,
  );
  console.log(
    '  fault                  compactions  from queue  local  doubled  down  threw  preflight p50 / p99',
  );
  const runs: QueueFaultRun[] = [];
  for (const fault of faults) {
    const run = await queueFaultRun(fault);
    runs.push(run);
    console.log(
      `  ${run.fault.padEnd(22)} ${String(run.compactions).padStart(11)}  ${run.shareFromQueue.toFixed(2).padStart(10)}  ${String(run.local).padStart(5)}  ${String(run.doubled).padStart(7)}  ${String(run.down).padStart(4)}  ${String(run.failures).padStart(5)}  ${run.p50.toFixed(1)} / ${run.p99.toFixed(1)} ms`,
    );
  }
  return runs;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!redisAvailable('bench/queue-faults.ts')) process.exit(0);
  const only = process.argv.slice(2).join(' ');
  await queueFaultsBench(only ? QUEUE_FAULTS.filter((fault) => fault.startsWith(only)) : QUEUE_FAULTS);
}
