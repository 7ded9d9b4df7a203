/**
 * Issue 46, how it is checked: a fleet on a real redis-server (3 agents with their own
 * clients, BullMQ worker processes) stepping 3 sessions together while a fault hits:
 * a worker SIGKILLed mid-job, Redis SIGSTOPped, Redis restarted without persistence, a
 * summarizer that hangs and then one that always fails. Asserted: no preflight throws, no
 * session version gets two summary texts within one Redis lifetime, and no agent ever sends
 * a version lower than one it sent before. Faults start and end on events (a summarizer
 * started, steps answered), never on a clock.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, startAgent, WorkerFleet } from '../queue/support/queue-fleet.js';
import { chatTurns } from '../support/background-fixtures.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const withRedis = redisAvailable('fleet fault tests');
const SESSIONS = 3;
const STEPS = 36;
let server: RedisTestServer;
const open: { agents: Agent[]; fleet: WorkerFleet }[] = [];

beforeAll(async () => {
  if (withRedis) server = await startRedisServer();
});

afterEach(async () => {
  for (const { agents, fleet } of open.splice(0)) {
    await fleet.stop();
    await Promise.all(agents.map((agent) => agent.close()));
  }
});

afterAll(async () => {
  await server?.stop();
});

interface Sent {
  session: string;
  agent: number;
  step: number;
  version: number;
  text: string | undefined;
  lifetime: number;
}

/** A fleet of 3 agents over `server` and workers started by the test. */
function fleetOf() {
  const keyPrefix = `faults:${randomUUID()}:`;
  const name = `faults-${randomUUID()}`;
  const fleet = new WorkerFleet({ REDIS_URL: server.url, KEY_PREFIX: keyPrefix, QUEUE_NAME: name });
  // A short store budget: a stopped Redis costs a call half a second, then calls go local.
  const agents = [0, 1, 2].map(() =>
    startAgent(server.url, keyPrefix, name, {
      storeTimeoutMs: 500,
      maxContextTokens: 4_000,
      policy: { hardCapBuffer: 200 },
    }),
  );
  open.push({ agents, fleet });
  const histories = Array.from({ length: SESSIONS }, (_, s) => chatTurns(STEPS + 2, 100, `s${s}-`));
  const sent: Sent[] = [];
  let lifetime = 0;
  /** Steps `from..to` of every session together; `during(step)` runs before each step. */
  const drive = async (from: number, to: number, during?: (step: number) => Promise<void>) => {
    for (let step = from; step <= to; step++) {
      await during?.(step);
      await Promise.all(
        histories.map(async (history, s) => {
          const agent = (s + step) % agents.length;
          const result = await agents[agent]!.manager.compact(`s${s}`, history.slice(0, 2 * step));
          sent.push({
            session: `s${s}`,
            agent,
            step,
            version: result.version,
            text: result.summary?.text,
            lifetime,
          });
        }),
      );
    }
  };
  return {
    fleet,
    agents,
    sent,
    drive,
    newLifetime: () => {
      lifetime++;
    },
  };
}

/** No version with two texts within one Redis lifetime; no agent's versions going down. */
function check(sent: readonly Sent[]): void {
  const texts = new Map<string, Set<string>>();
  for (const r of sent) {
    if (r.text === undefined) continue;
    const key = `${r.lifetime}|${r.session}|v${r.version}`;
    const set = texts.get(key) ?? new Set<string>();
    set.add(r.text);
    texts.set(key, set);
  }
  const doubled = [...texts].filter(([, set]) => set.size > 1).map(([key]) => key);
  expect(doubled).toEqual([]);
  const highest = new Map<string, number>();
  const down: string[] = [];
  for (const r of [...sent].sort((a, b) => a.step - b.step)) {
    const key = `${r.agent}|${r.session}`;
    if (r.version < (highest.get(key) ?? 0)) down.push(`${key} step ${r.step}: v${r.version}`);
    highest.set(key, Math.max(highest.get(key) ?? 0, r.version));
  }
  expect(down).toEqual([]);
  expect(Math.max(...sent.map((r) => r.version))).toBeGreaterThanOrEqual(2);
}

describe.runIf(withRedis)('a fleet under faults (issue 46)', () => {
  it('a worker SIGKILLed mid-job', async () => {
    const { fleet, sent, drive } = fleetOf();
    await fleet.start('hang', { MODE: 'hang', STALLED_MS: '500', LOCK_MS: '1000' });
    await drive(1, 16);
    // Past prepareAtPct: a job reached the worker, whose summarizer hangs; it dies mid-job.
    await fleet.untilCount((report) => report.type === 'summarizing', 1);
    await fleet.kill('hang');
    await fleet.start('ok', { STALLED_MS: '500', LOCK_MS: '1000' });
    await drive(17, STEPS);
    check(sent);
  });

  it('Redis SIGSTOPped for a few steps', async () => {
    const { fleet, sent, drive } = fleetOf();
    await fleet.start('ok');
    await drive(1, 22);
    process.kill(server.pid, 'SIGSTOP');
    try {
      await drive(23, 24);
    } finally {
      process.kill(server.pid, 'SIGCONT');
    }
    await drive(25, STEPS);
    check(sent);
  });

  it('a summarizer that hangs, then one that always fails', async () => {
    const { fleet, sent, drive } = fleetOf();
    await fleet.start('hang', { MODE: 'hang', STALLED_MS: '500', LOCK_MS: '1000' });
    await drive(1, 16);
    await fleet.untilCount((report) => report.type === 'summarizing', 1);
    await fleet.kill('hang');
    await fleet.start('fail', { MODE: 'fail', STALLED_MS: '500', LOCK_MS: '1000' });
    await drive(17, STEPS);
    check(sent);
  });

  it('Redis restarted without persistence', async () => {
    const { fleet, sent, drive, agents, newLifetime } = fleetOf();
    await fleet.start('ok');
    await drive(1, 22);
    const port = server.port;
    await server.stop();
    server = await startRedisServer({ port });
    newLifetime();
    // The agents' clients reconnect (calls meanwhile go on from each process's copy): until
    // each answers, however long a loaded machine takes (the test's timeout bounds a hang).
    for (const agent of agents)
      while (
        !(await agent.store.get('probe').then(
          () => true,
          () => false,
        ))
      )
        await new Promise((resolve) => setTimeout(resolve, 50));
    await drive(23, STEPS);
    check(sent);
  });
});
