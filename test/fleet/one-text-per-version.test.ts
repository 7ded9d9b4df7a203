/**
 * Issue 46 points 2 and 4, under every fault of the issue, with real processes: 3 agent
 * processes (fleet-agent.ts: own Redis clients, one fs archive shared by all) and BullMQ
 * worker processes on one real redis-server, stepping 3 sessions together, each step of a
 * session on another agent. Every summarizer writes its process's name into its summaries, so
 * two processes summarizing for one version always differ, as two LLM calls would.
 *
 * Asserted over everything every agent sent: no call threw; no session version went out with
 * two texts, across processes and Redis lifetimes; no session's version went down from one
 * response to the next, whichever agent answered. Faults start and end on events (a worker's
 * summarizer started, calls answered, a client answering again), never on a clock.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WorkerFleet } from '../queue/support/queue-fleet.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { until } from '../support/until.js';
import { AgentFleet, driveFleet, FleetLedger } from './support/agent-fleet.js';

const withRedis = redisAvailable('one text per version (fleet) tests');
const SESSIONS = ['s0', 's1', 's2'];
const AGENTS = ['a', 'b', 'c'];
const STEPS = 36;
let server: RedisTestServer;
const open: { agents: AgentFleet; workers: WorkerFleet; archive: string }[] = [];

beforeAll(async () => {
  if (withRedis) server = await startRedisServer();
});

afterEach(async () => {
  for (const { agents, workers, archive } of open.splice(0)) {
    await workers.stop();
    await agents.stop();
    rmSync(archive, { recursive: true, force: true });
  }
});

afterAll(async () => {
  await server?.stop();
});

/** A fleet of 3 agent processes over `server`, with an archive they share; workers started by the test. */
async function fleetOf() {
  const base = {
    REDIS_URL: server.url,
    KEY_PREFIX: `one:${randomUUID()}:`,
    QUEUE_NAME: `one-${randomUUID()}`,
  };
  const archive = mkdtempSync(join(tmpdir(), 'fleet-archive-'));
  const agents = new AgentFleet({ ...base, ARCHIVE_DIR: archive });
  const workers = new WorkerFleet(base);
  open.push({ agents, workers, archive });
  await Promise.all(AGENTS.map((id) => agents.start(id)));
  const ledger = new FleetLedger();
  const rotate = (s: number, step: number) => AGENTS[(s + step) % AGENTS.length]!;
  const drive = (
    from: number,
    to: number,
    during?: (step: number) => boolean | undefined | Promise<boolean | undefined>,
    agentOf = rotate,
  ) => driveFleet(agents, ledger, SESSIONS, { from, to }, agentOf, during);
  return { agents, workers, ledger, drive };
}

/** The checks of issue 46 (points 2, 3 and 4) over everything the agents sent. */
function check(ledger: FleetLedger): void {
  expect(ledger.failures()).toEqual([]);
  expect(ledger.doubled()).toEqual([]);
  const down = ledger.down();
  const session = down[0]?.split(' ')[0];
  expect(down, session && `${session}'s answers:\n${ledger.story(session)}`).toEqual([]);
  expect(ledger.highest()).toBeGreaterThanOrEqual(2);
}

/** Resolves once every agent's store client answers again. */
async function reconnected(agents: AgentFleet, ids: readonly string[]): Promise<void> {
  for (const id of ids) await until(() => agents.probe(id), `agent ${id} reaching Redis again`);
}

describe.runIf(withRedis)('one text per version, versions never down, across processes (issue 46)', () => {
  it('a worker SIGKILLed mid-job', async () => {
    const { workers, ledger, drive } = await fleetOf();
    await workers.start('hang', { MODE: 'hang', STALLED_MS: '500', LOCK_MS: '1000' });
    await drive(1, 16);
    // Past prepareAtPct: a job reached the worker, whose summarizer hangs; it dies mid-job.
    await workers.untilCount((report) => report.type === 'summarizing', 1);
    await workers.kill('hang');
    await workers.start('ok', { STALLED_MS: '500', LOCK_MS: '1000' });
    await drive(17, STEPS);
    check(ledger);
  });

  it('Redis SIGSTOPped while sessions must compact (local answers claim no version)', async () => {
    const { workers, ledger, drive } = await fleetOf();
    await workers.start('ok');
    await drive(1, 18);
    const stoppedAt = ledger.sent.length;
    process.kill(server.pid, 'SIGSTOP');
    let next: number;
    try {
      // The outage lasts until two agents each compacted one session while Redis was stopped
      // (what doubled a version before), at most 12 steps.
      const twoAgentsCompacted = () => {
        const during = ledger.sent.slice(stoppedAt).filter((s) => s.result?.applied);
        return SESSIONS.some(
          (session) => new Set(during.filter((s) => s.session === session).map((s) => s.agent)).size >= 2,
        );
      };
      next = await drive(19, 30, () => !twoAgentsCompacted());
      expect(twoAgentsCompacted()).toBe(true);
    } finally {
      process.kill(server.pid, 'SIGCONT');
    }
    await drive(next, next + 14);
    check(ledger);
    // The compactions made while Redis was stopped were local answers.
    expect(ledger.sent.slice(stoppedAt).some((s) => s.result?.local)).toBe(true);
  });

  it('a summarizer that hangs, then one that always fails', async () => {
    const { workers, ledger, drive } = await fleetOf();
    await workers.start('hang', { MODE: 'hang', STALLED_MS: '500', LOCK_MS: '1000' });
    await drive(1, 16);
    await workers.untilCount((report) => report.type === 'summarizing', 1);
    await workers.kill('hang');
    await workers.start('fail', { MODE: 'fail', STALLED_MS: '500', LOCK_MS: '1000' });
    await drive(17, STEPS);
    check(ledger);
  });

  it('Redis restarted without persistence: an agent that never held a session resumes its floor from the archive', async () => {
    const { agents, workers, ledger, drive } = await fleetOf();
    await workers.start('ok');
    await drive(1, 22);
    const before = ledger.highest();
    const port = server.port;
    await server.stop();
    server = await startRedisServer({ port });
    await reconnected(agents, AGENTS);
    // A fourth agent that never held any session answers every session first: the store is
    // empty, its only floor is the archive.
    await agents.start('fresh');
    await drive(23, 23, undefined, () => 'fresh');
    const fresh = ledger.sent.filter((s) => s.agent === 'fresh');
    for (const s of fresh) expect(s.result?.version, s.session).toBeGreaterThanOrEqual(before);
    expect(agents.events('version_floor').length).toBeGreaterThanOrEqual(1);
    await drive(24, STEPS, undefined, (s, step) => [...AGENTS, 'fresh'][(s + step) % 4]!);
    check(ledger);
  });
});
