/**
 * `npx tsx bench/queue.ts` (or `npm run bench`, where `--no-queue` skips it): a fleet on a real
 * redis-server on loopback. 3 agent processes (bench/queue-agent.ts) serve SESSIONS sessions
 * of STEPS steps (each step goes to the next process, as behind a load balancer; a model call
 * of MODEL_MS between steps); summaries take SUMMARIZE_MS (a scripted slow summarizer).
 * Four runs: background preparation with the library's own lock (no queue); the BullMQ queue
 * with 2 worker processes (test/queue/support/queue-worker.ts, QUEUE_BENCH_CONCURRENCY jobs
 * each, default 4), preparations started at the fixed `prepareAtPct` (the old behaviour, for a
 * before/after in one run); the same with the learned lead time (the default); and that with
 * one worker SIGKILLed halfway. Reported: preparations run per prepared version used, summaries stale
 * (built on another base than the version before) or doubled (two texts for one version),
 * and the agents' preflight p50/p99. Each session is ended after its last step
 * (`endSession(id, { closed: true })`: its waiting job is withdrawn), and every worker summarizer
 * run is counted by what became of it (used, last version never reached, published unused,
 * late, duplicate, failed, no outcome), with an estimate of the last-version jobs any schedule
 * had to start before the sessions closed (bench/queue-last-version.ts).
 *
 * Size: QUEUE_BENCH_SESSIONS (default 30), QUEUE_BENCH_STEPS (default 120).
 * Lockstep (issue 46): QUEUE_BENCH_LOCKSTEP=1 steps every session together (a barrier per
 * step, then one model call), e.g. `QUEUE_BENCH_LOCKSTEP=1 QUEUE_BENCH_SESSIONS=20
 * QUEUE_BENCH_STEPS=150 QUEUE_BENCH_MODEL_MS=150 npx tsx bench/queue.ts`.
 */
import { randomUUID } from 'node:crypto';
import { bullmqPreparationQueue } from '../src/queue/index.js';
import { redisSessionStore } from '../src/storage/redis/index.js';
import type { QueueWorkerReport } from '../test/queue/support/queue-worker.js';
import { previousMark } from '../test/queue/support/queue-worker-mark.js';
import { redisAvailable, startRedisServer } from '../test/support/redis-server.js';
import type { QueueAgentReport } from './queue-agent.js';
import { type Child, next, spawnChild, stop } from './queue-children.js';
import { type LastVersionFloor, lastVersionFloor } from './queue-last-version.js';
import { type QueueWaste, queueWaste, wasteLine } from './queue-waste.js';

const SESSIONS = Number(process.env.QUEUE_BENCH_SESSIONS ?? 30);
const STEPS = Number(process.env.QUEUE_BENCH_STEPS ?? 120);
const MODEL_MS = Number(process.env.QUEUE_BENCH_MODEL_MS ?? 300);
const SUMMARIZE_MS = Number(process.env.QUEUE_BENCH_SUMMARIZE_MS ?? 400);
const LOCKSTEP = process.env.QUEUE_BENCH_LOCKSTEP === '1';
const AGENT = new URL('./queue-agent.ts', import.meta.url).pathname;
const WORKER = new URL('../test/queue/support/queue-worker.ts', import.meta.url).pathname;

type Mode = 'background' | 'queue, fixed threshold' | 'queue' | 'queue, a worker killed';
const MODES: readonly Mode[] = ['background', 'queue, fixed threshold', 'queue', 'queue, a worker killed'];
/** QUEUE_BENCH_MODES: a comma-separated subset of the modes (e.g. `queue, fixed threshold,queue`). */
const SELECTED: readonly Mode[] = process.env.QUEUE_BENCH_MODES
  ? MODES.filter((mode) => process.env.QUEUE_BENCH_MODES!.split(/,(?! )/).includes(mode))
  : MODES;
const CONCURRENCY = process.env.QUEUE_BENCH_CONCURRENCY ?? '4';
/** QUEUE_BENCH_WORKER_SKEW_MS: the workers' clocks run this far ahead of the agents' (negative: behind). */
const WORKER_SKEW_MS = process.env.QUEUE_BENCH_WORKER_SKEW_MS ?? '0';

/** The figures of one run. */
export interface QueueBenchRun {
  mode: Mode;
  steps: number;
  /** Summary versions written (compactions applied across the fleet). */
  versions: number;
  /** Prepared summaries swapped in at a trigger. */
  used: number;
  /** Summarizer runs of preparations (agents' for background, workers' for the queue). */
  preparations: number;
  /** Summarizer runs of compactions at the trigger (no prepared summary fitted). */
  synchronous: number;
  ratio: number;
  /** Preparations of a session's last version, published after its last trigger (the session ended). */
  endOfSession: number;
  /** Preparations run, without those, per version used. */
  ratioInSession: number;
  stale: number;
  doubled: number;
  p50: number;
  p99: number;
  wallMs: number;
  /** Jobs a worker dropped without a summarizer call: superseded, already prepared, expired (past their deadline). */
  skipped?: { superseded: number; alreadyPrepared: number; expired: number; held: number };
  /**
   * Every worker summarizer run by what became of it: used at a trigger; published for a last
   * version the session never reached; published but not used otherwise; late (the session
   * compacted while the summarizer ran: superseded at publish); duplicate (another run
   * published the version first); failed; no outcome (its worker was killed).
   */
  runsBy?: {
    used: number;
    lastVersion: number;
    publishedUnused: number;
    late: number;
    duplicate: number;
    failed: number;
    noOutcome: number;
  };
  /** The agents' queue figures: jobs late at their trigger, preparations not enqueued (too late), backlog episodes, learned lead time (ms, per agent). */
  agentsQueue?: {
    late: number;
    tooLate: number;
    backlogEpisodes: number;
    leadTimeMs: (number | undefined)[];
  };
  /** Last-version runs any schedule had to start before the close (bench/queue-last-version.ts). */
  lastVersionFloor?: LastVersionFloor;
  /** Where the worker summarizer calls not used went, against each session's close (bench/queue-waste.ts). */
  waste?: QueueWaste;
  /** Each live worker's learned margins at the end (its `status().margins`). */
  margins?: string[];
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
};

/** A summary message's body as the summarizer of the next version gets it (no tags, no mark). */
function body(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^(<\/?COMPACT-SUMMARY[^>]*>|\[summary-mark [^\]]*\])$/.test(line.trim()))
    .join('\n');
}

/** Stale (a summary on another base than the version before) and doubled (two texts for one version). */
function checkChains(done: Extract<QueueAgentReport, { type: 'done' }>[]): {
  stale: number;
  doubled: number;
} {
  const texts = new Map<string, Map<number, Set<string>>>();
  for (const r of done) {
    if (r.summary === undefined || r.version === 0) continue;
    const bySession = texts.get(r.session) ?? new Map<number, Set<string>>();
    texts.set(r.session, bySession);
    const set = bySession.get(r.version) ?? new Set<string>();
    bySession.set(r.version, set);
    set.add(r.summary);
  }
  let stale = 0;
  let doubled = 0;
  for (const bySession of texts.values()) {
    for (const [version, set] of bySession) {
      if (set.size > 1) doubled++;
      const text = [...set][0]!;
      const previous = bySession.get(version - 1);
      const expected =
        version === 1 ? previousMark(undefined) : previous && previousMark(body([...previous][0]!));
      // A version whose predecessor no result showed cannot be checked.
      if (expected !== undefined && !text.includes(` ${expected}:`)) {
        stale++;
        if (process.env.QUEUE_BENCH_DEBUG)
          console.log('stale?', JSON.stringify([text, body([...previous!][0]!)]));
      }
    }
  }
  return { stale, doubled };
}

async function run(url: string, mode: Mode): Promise<QueueBenchRun> {
  const keyPrefix = `bench:${randomUUID()}:`;
  const queueName = mode === 'background' ? '' : `bench-${randomUUID()}`;
  const common = {
    REDIS_URL: url,
    KEY_PREFIX: keyPrefix,
    SUMMARIZE_MS: String(SUMMARIZE_MS),
    STEPS: String(STEPS),
  };
  const agents = await Promise.all(
    ['a1', 'a2', 'a3'].map((id) =>
      spawnChild<QueueAgentReport>(AGENT, {
        ...common,
        AGENT_ID: id,
        QUEUE_NAME: queueName,
        PREPARATION_LEAD: mode === 'queue, fixed threshold' ? 'fixed' : 'learned',
      }),
    ),
  );
  const workerEnv = {
    ...common,
    QUEUE_NAME: queueName,
    CONCURRENCY,
    STALLED_MS: '1000',
    LOCK_MS: '3000',
    CLOCK_SKEW_MS: WORKER_SKEW_MS,
  };
  const workers =
    mode === 'background'
      ? []
      : await Promise.all(
          ['w1', 'w2'].map((id) => spawnChild<QueueWorkerReport>(WORKER, { ...workerEnv, WORKER_ID: id })),
        );
  const done: Extract<QueueAgentReport, { type: 'done' }>[] = [];
  let finished = 0;
  let killed = false;
  const started = performance.now();
  const stepOf = async (s: number, step: number) => {
    const session = `s${s}`;
    const agent = agents[(s + step) % agents.length]!;
    const answer = next(agent, (r) => r.type === 'done' && r.session === session && r.step === step);
    agent.process.send({ type: 'step', session, step });
    done.push((await answer) as Extract<QueueAgentReport, { type: 'done' }>);
    if (++finished === Math.floor((SESSIONS * STEPS) / 2) && mode === 'queue, a worker killed') {
      killed = true;
      workers[1]!.process.kill('SIGKILL');
    }
  };
  const model = () => new Promise((resolve) => setTimeout(resolve, MODEL_MS));
  // The conversation closes: the agent that served its last step ends it (manager.endSession).
  // When each session's agent ended it (stamped by the agent, as the workers stamp theirs).
  const closedAt = new Map<string, number>();
  const endOf = async (s: number) => {
    const session = `s${s}`;
    const agent = agents[(s + STEPS) % agents.length]!;
    const answer = next(agent, (r) => r.type === 'ended' && r.session === session);
    agent.process.send({ type: 'end', session });
    closedAt.set(session, ((await answer) as { at?: number }).at ?? Date.now());
  };
  if (LOCKSTEP) {
    // Every session steps together: all preflights of a step, then one model call.
    for (let step = 1; step <= STEPS; step++) {
      await Promise.all(Array.from({ length: SESSIONS }, (_, s) => stepOf(s, step)));
      await model();
    }
    await Promise.all(Array.from({ length: SESSIONS }, (_, s) => endOf(s)));
  } else {
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, s) => {
        for (let step = 1; step <= STEPS; step++) {
          await stepOf(s, step);
          await model();
        }
        await endOf(s);
      }),
    );
  }
  const wallMs = performance.now() - started;
  if (process.env.QUEUE_BENCH_DEBUG) {
    for (const r of done)
      console.log(
        r.session,
        r.step,
        (r as { at?: number }).at,
        r.agent,
        r.version,
        r.applied,
        Math.round(r.ms),
        r.summarizer,
        JSON.stringify(r.summary?.slice(0, 80)),
      );
    for (const w of workers) for (const r of w.reports) console.log(JSON.stringify(r));
    for (const r of [...done].sort((a, b) => b.ms - a.ms).slice(0, 5))
      console.log('slow', r.session, r.step, r.agent, Math.round(r.ms), r.applied);
  }
  const statsOf = () =>
    Promise.all(
      agents.map((agent) => {
        const answer = next(agent, (r) => r.type === 'stats');
        agent.process.send({ type: 'stats' });
        return answer as Promise<Extract<QueueAgentReport, { type: 'stats' }>>;
      }),
    );
  // Quiet first: the preparations still running finish (published, or dropped by the fence).
  let stats = await statsOf();
  while (stats.some((s) => s.status.running > 0)) stats = await statsOf();
  if (queueName) {
    const queue = bullmqPreparationQueue({ connection: url, name: queueName });
    for (;;) {
      const counts = await queue.counts();
      if (counts.active + counts.waiting + counts.delayed === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await queue.close();
  }
  const live = workers.filter((_, i) => !(killed && i === 1));
  const workerStats = await Promise.all(
    live.map((worker) => {
      const answer = next(worker, (r) => r.type === 'status');
      worker.process.send({ type: 'status' });
      return answer as Promise<Extract<QueueWorkerReport, { type: 'status' }>>;
    }),
  );
  await Promise.all([...agents, ...workers].map((child) => stop(child as Child<unknown>)));

  const versions = new Map<string, number>();
  for (const r of done) versions.set(r.session, Math.max(versions.get(r.session) ?? 0, r.version));
  const versionCount = [...versions.values()].reduce((sum, v) => sum + v, 0);
  // Preparations of each session's last version: published, never used (the session ended first).
  const store = redisSessionStore({ url, keyPrefix });
  let endOfSession = 0;
  // A prepared record's version is the version it makes (in the one slot, from an older
  // agent's job, or among the branch records).
  for (const [session, version] of versions) {
    const slot = await store.get(`${session}::prepared`);
    const branches = (await store.get(`${session}::prepared-forks`))?.branches ?? [];
    if ([slot, ...branches].some((record) => record?.version === version + 1)) endOfSession++;
  }
  await store.close();
  const used = stats.reduce((sum, s) => sum + s.status.used, 0);
  const agentPreparations = stats.reduce((sum, s) => sum + s.status.summarized, 0);
  const agentCalls = stats.reduce((sum, s) => sum + s.ownSummarizerCalls, 0);
  // Every summarizer start a worker reported, the killed worker's included.
  const workerRuns = workers.reduce(
    (sum, w) => sum + w.reports.filter((r) => r.type === 'summarizing').length,
    0,
  );
  const preparations = mode === 'background' ? agentPreparations : workerRuns;
  const { stale, doubled } = checkChains(done);
  const ran = workers.flatMap((w) =>
    w.reports.flatMap((r) => (r.type === 'job' && r.outcome.summarized ? [r.outcome.result] : [])),
  );
  const runsOf = (result: string) => ran.filter((r) => r === result).length;
  const published = runsOf('published');
  const times = done.map((r) => r.ms);
  return {
    mode,
    steps: done.length,
    versions: versionCount,
    used,
    preparations,
    synchronous: agentCalls - agentPreparations,
    ratio: used > 0 ? preparations / used : Number.NaN,
    endOfSession,
    ratioInSession: used > 0 ? (preparations - endOfSession) / used : Number.NaN,
    stale,
    doubled,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    wallMs,
    ...(mode === 'background'
      ? {}
      : {
          skipped: {
            superseded: workerStats.reduce((sum, w) => sum + w.status.superseded, 0),
            alreadyPrepared: workerStats.reduce((sum, w) => sum + w.status.alreadyPrepared, 0),
            expired: workerStats.reduce((sum, w) => sum + w.status.expired, 0),
            held: workerStats.reduce((sum, w) => sum + (w.status.held ?? 0), 0),
          },
          runsBy: {
            used,
            lastVersion: endOfSession,
            publishedUnused: published - used - endOfSession,
            late: runsOf('superseded'),
            duplicate: runsOf('already_prepared'),
            failed: runsOf('failed'),
            noOutcome: workerRuns - ran.length,
          },
          ...optional(
            'lastVersionFloor',
            lastVersionFloor(
              done,
              live.map((w) => w.reports),
              live.length * Number(CONCURRENCY),
              STEPS,
            ),
          ),
          margins: workerStats.map(({ status: { margins: m } }) =>
            m
              ? `run ${m.runMedianMs}/${m.runP90Ms} ms (+${m.runMarginMs}), drift ${m.dueDriftShare.toFixed(2)} of ${m.dueDriftSamples}`
              : '-',
          ),
          waste: queueWaste(
            workers.map((w) => w.reports),
            versions,
            closedAt,
          ),
          agentsQueue: {
            late: stats.reduce((sum, s) => sum + s.status.late, 0),
            tooLate: stats.reduce((sum, s) => sum + s.status.tooLate, 0),
            backlogEpisodes: stats.reduce((sum, s) => sum + s.status.backlogEpisodes, 0),
            leadTimeMs: stats.map((s) => s.status.leadTimeMs),
          },
        }),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** Runs the three modes on one redis-server. */
export async function queueBench(): Promise<QueueBenchRun[]> {
  const server = await startRedisServer();
  try {
    const runs: QueueBenchRun[] = [];
    for (const mode of SELECTED) runs.push(await run(server.url, mode));
    return runs;
  } finally {
    await server.stop();
  }
}

/** Prints the runs as a table. */
export function printQueueBench(runs: readonly QueueBenchRun[]): void {
  console.log(
    `${SESSIONS} sessions x ${STEPS} steps${LOCKSTEP ? ' in lockstep' : ''}, 3 agent processes (+2 workers with the queue), model call ${MODEL_MS} ms, summarizer ${SUMMARIZE_MS} ms:`,
  );
  for (const r of runs) {
    const skipped = r.skipped
      ? `; worker skipped ${r.skipped.superseded} superseded, ${r.skipped.alreadyPrepared} already prepared, ${r.skipped.expired} past their deadline (no summarizer call); ${r.skipped.held} holds (a job not due yet put back until its start)`
      : '';
    const agentsQueue = r.agentsQueue
      ? `; agents: ${r.agentsQueue.late} jobs late at the trigger, ${r.agentsQueue.tooLate} not enqueued (too late), ${r.agentsQueue.backlogEpisodes} backlog warnings, lead time ${r.agentsQueue.leadTimeMs.map((ms) => (ms === undefined ? '-' : `${ms} ms`)).join('/')}`
      : '';
    const runsBy = r.runsBy
      ? `; summarizer runs by outcome: used ${r.runsBy.used}, last version never reached ${r.runsBy.lastVersion}, published unused ${r.runsBy.publishedUnused}, late (superseded after the summarizer) ${r.runsBy.late}, duplicate ${r.runsBy.duplicate}, failed ${r.runsBy.failed}, no outcome (worker killed) ${r.runsBy.noOutcome}`
      : '';
    const floor = r.lastVersionFloor
      ? `; last version: at least ${r.lastVersionFloor.floor} of ${r.lastVersionFloor.sessions} jobs had to start before the close to be ready at their next trigger (estimate: ${r.lastVersionFloor.slots} slots, run ${r.lastVersionFloor.runMs} ms, next triggers ${r.lastVersionFloor.triggersAfterCloseMs.join('-')} ms after the close)`
      : '';
    console.log(
      `  ${r.mode.padEnd(24)} ${r.waste ? `${wasteLine(r.waste, r.used)}; ` : ''}${r.margins ? `worker margins ${r.margins.join(' / ')}; ` : ''}versions ${r.versions}, prepared used ${r.used} (share ${(r.used / Math.max(1, r.versions)).toFixed(3)}), preparations run ${r.preparations} (${r.ratio.toFixed(3)} per version used; ${r.endOfSession} of them for a last version the session never reached: ${r.ratioInSession.toFixed(3)} without them; issue 46: <= 1.1; jobs skipped below made no summarizer call), at the trigger ${r.synchronous}; stale ${r.stale}, doubled ${r.doubled}; preflight p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms; ${(r.wallMs / 1000).toFixed(1)} s${skipped}${runsBy}${floor}${agentsQueue}`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (redisAvailable('bench/queue.ts')) printQueueBench(await queueBench());
}
