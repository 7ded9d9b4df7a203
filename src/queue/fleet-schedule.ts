/**
 * A schedule across the fleet by expected trigger: each job that carries a `dueAt` (when its
 * agent expects the session's trigger) is listed in a sorted set beside the queue
 * (`<prefix>:<name>:ac-due`; kept by the agents' adds, withdrawals and calls, each call past
 * the threshold renewing the session's estimate, and by the workers' runs), and each worker
 * lists its slots (`<prefix>:<name>:ac-slots`, renewed while it runs, gone 15 s after it
 * dies). A worker that picks a job reads the due times of the jobs due after it and the
 * fleet's slots, and holds the job (BullMQ `moveToDelayed`) until its latest start as late as
 * possible, earliest due first, with margins learned from its runs' times and its due times'
 * error ({@link holdUntil}): a job enqueued a lead time ahead of a
 * trigger its session never reaches (a conversation that closes first) is withdrawn
 * while held instead of run. Held jobs are looked at again at most {@link RECHECK_MS} later
 * (the estimate moves, jobs due sooner come in). A job without `dueAt`, or before the worker
 * has timed a run, runs when picked; a Redis error runs it too (the schedule never costs a job).
 */

import type { PreparationJob } from '../core/queues/preparation-queue.js';
import { WITHDRAWN_CHANNEL } from './withdrawals.js';

/** A held job is looked at again at least this often (ms): jobs due sooner may come in meanwhile. */
export const RECHECK_MS = 1_000;
/** A start less than this far ahead (ms) is not worth a hold: the job runs now. */
export const MIN_HOLD_MS = 250;
/** A worker's listed slots lapse this long (ms) after its last renewal. */
export const SLOTS_TTL_MS = 15_000;
/** Later jobs a hold looks at, at most (the nearest due). */
const LATER_KEPT = 1_000;
/** Jobs due longer ago than this (ms) are forgotten (their agent gone, their run lost). */
const FORGET_AFTER_MS = 120_000;

/** The Redis commands the schedule needs (BullMQ's client: `defineCommand`, `runCommand`). */
export interface ScheduleClient {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
  runCommand(name: string, args: (string | number)[]): Promise<unknown>;
}

const COMMAND = 'agentCompactionSchedule';

// KEYS: the due set, the slots set. ARGV[1]: the operation.
const LUA = /* lua */ `
local op = ARGV[1]
if op == 'due' then
  if ARGV[4] ~= 'XX' then
    local mark = redis.call('ZSCORE', KEYS[3], 'w:' .. ARGV[2])
    if mark and (not ARGV[5] or ARGV[5] == '' or tonumber(ARGV[5]) > tonumber(mark)) then
      redis.call('ZREM', KEYS[3], 'w:' .. ARGV[2])
    end
  end
  if ARGV[3] == '' or redis.call('ZSCORE', KEYS[3], ARGV[2]) then return 0 end
  if ARGV[4] == 'XX' then redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[2])
  else redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2]) end
  return 0
elseif op == 'done' then
  local due = redis.call('ZSCORE', KEYS[1], ARGV[2])
  redis.call('ZREM', KEYS[1], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
  return due
elseif op == 'withdrawn' then
  redis.call('ZREM', KEYS[1], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[3], 'w:' .. ARGV[2])
  if ARGV[4] and ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], ARGV[2]) end
  return 0
elseif op == 'slots' then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
  return 0
elseif op == 'leave' then
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 0
elseif op == 'time' then
  return redis.call('TIME')
elseif op == 'marked' then
  if redis.call('ZSCORE', KEYS[3], 'w:' .. ARGV[2]) then return 1 end
  return 0
end
if redis.call('ZSCORE', KEYS[3], 'w:' .. ARGV[2]) then return {-1} end
redis.call('ZREM', KEYS[3], ARGV[2])
local due = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not due then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  due = ARGV[3]
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[4])
local slots = 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  slots = slots + (tonumber(string.match(member, '|(%d+)$')) or 0)
end
local answer = {slots, tostring(due)}
local later = redis.call('ZRANGEBYSCORE', KEYS[1], due, '+inf', 'WITHSCORES', 'LIMIT', 0, ${LATER_KEPT})
for i = 1, #later, 2 do
  if later[i] ~= ARGV[2] then answer[#answer + 1] = later[i + 1] end
end
return answer
`;

/** The schedule's keys for a queue (BullMQ's `toKey`): jobs by due time, workers' slots, jobs done lately. */
export type ScheduleKeys = readonly [string, string, string];

/** The schedule's keys for a queue (BullMQ's `toKey`). */
export function scheduleKeys(toKey: (type: string) => string): ScheduleKeys {
  return [toKey('ac-due'), toKey('ac-slots'), toKey('ac-done')];
}

const defined = new WeakSet<object>();

function run(client: ScheduleClient, keys: ScheduleKeys, args: (string | number)[]): Promise<unknown> {
  if (!defined.has(client)) {
    client.defineCommand(COMMAND, { numberOfKeys: 3, lua: LUA });
    defined.add(client);
  }
  return client.runCommand(COMMAND, [...keys, ...args]);
}

/**
 * Lists `jobId` as due at `dueAt` (an agent's add: idempotent; `update`: only a job listed
 * already, with the session's newer estimate; `undefined`: an add without a due time, which
 * only settles the withdrawal mark). A job run or withdrawn lately is not listed again (a
 * duplicate add after its run). An add lifts the job's withdrawal mark unless it was decided
 * (`decidedAt`, the job's `enqueuedAt`) before the withdrawal: an add still on the way when
 * another agent closed the session leaves the mark, and a worker drops the job unsummarized.
 */
export function listDue(
  client: ScheduleClient,
  keys: ScheduleKeys,
  jobId: string,
  dueAt: number | undefined,
  update = false,
  decidedAt?: number,
): Promise<unknown> {
  return run(client, keys, [
    'due',
    jobId,
    dueAt === undefined ? '' : Math.round(dueAt),
    update ? 'XX' : '',
    decidedAt === undefined ? '' : Math.round(decidedAt),
  ]);
}

/** The channel a withdrawal of a running job is told on (withdrawals.ts), beside the due set. */
export function withdrawnChannel(keys: ScheduleKeys): string {
  return keys[0].replace(/ac-due$/, WITHDRAWN_CHANNEL);
}

/**
 * Takes `jobId` off the list for good: its agent withdrew it (the session closed or moved
 * past). A worker holding it at that moment (the job active for the hold) drops it at its next
 * pick instead of holding it again, and a worker running it cancels the run (the id is
 * published on {@link withdrawnChannel}); an agent's new add of the same id lifts the mark.
 */
export function markWithdrawn(
  client: ScheduleClient,
  keys: ScheduleKeys,
  jobId: string,
  now = Date.now(),
): Promise<unknown> {
  return run(client, keys, ['withdrawn', jobId, now, withdrawnChannel(keys)]);
}

/** The Redis server's time (epoch ms): the fleet's clock (fleet-clock.ts). */
export async function serverTime(client: ScheduleClient, keys: ScheduleKeys): Promise<number> {
  const [seconds, micros] = (await run(client, keys, ['time'])) as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Takes `jobId` off the list (run or dropped); resolves with its listed due time then, if any. */
export async function unlistDue(
  client: ScheduleClient,
  keys: ScheduleKeys,
  jobId: string,
  now = Date.now(),
): Promise<number | undefined> {
  const due = await run(client, keys, ['done', jobId, now]);
  return due === null || due === undefined ? undefined : Number(due);
}

const HELD_COMMAND = 'agentCompactionHeld';

// KEYS: the due set, BullMQ's delayed set. The smaller one is walked: held jobs are the
// delayed ones still listed as due (a run, retried or not, is unlisted first).
const HELD_LUA = /* lua */ `
local walk, other, due_first = KEYS[1], KEYS[2], true
if redis.call('ZCARD', KEYS[2]) < redis.call('ZCARD', KEYS[1]) then
  walk, other, due_first = KEYS[2], KEYS[1], false
end
local held, next_due = 0, nil
local members = redis.call('ZRANGE', walk, 0, -1, 'WITHSCORES')
for i = 1, #members, 2 do
  local score = redis.call('ZSCORE', other, members[i])
  if score then
    held = held + 1
    local due = tonumber(due_first and members[i + 1] or score)
    if not next_due or due < next_due then next_due = due end
  end
end
return {held, next_due and tostring(next_due) or ''}
`;

const definedHeld = new WeakSet<object>();

/** The jobs the fleet's schedule holds, and the earliest due time among them. */
export interface HeldJobs {
  /** Jobs in BullMQ's delayed set that the schedule holds (listed as due, not run yet). */
  readonly held: number;
  /** The earliest due time (epoch ms) of a held job; `undefined` when none is held. */
  readonly nextDueAt: number | undefined;
}

/**
 * Counts the jobs held fleet-wide: those in BullMQ's delayed set (`delayedKey`) still listed
 * as due (a retry's delay is not a hold: a run is unlisted first). One Lua call, linear in
 * the smaller of the two sets.
 */
export async function heldJobs(
  client: ScheduleClient,
  keys: ScheduleKeys,
  delayedKey: string,
): Promise<HeldJobs> {
  if (!definedHeld.has(client)) {
    client.defineCommand(HELD_COMMAND, { numberOfKeys: 2, lua: HELD_LUA });
    definedHeld.add(client);
  }
  const [held, next] = (await client.runCommand(HELD_COMMAND, [keys[0], delayedKey])) as [number, string];
  return { held: Number(held), nextDueAt: next === '' ? undefined : Number(next) };
}

/** What the fleet holds beside a job: its slots, and the due times of the jobs due no sooner. */
export interface FleetLoad {
  readonly slots: number;
  /** Due times (epoch ms, ascending) of the other listed jobs due at or after the job's. */
  readonly later: readonly number[];
}

/**
 * What a held job's start is planned with, from the worker's recent runs and the schedule's
 * own due-time error (run-times.ts, due-drift.ts).
 */
export interface RunPlan {
  /** A run's time (ms): the median of the recent runs. */
  readonly runMs: number;
  /**
   * The margin for a run's own time (ms): how much longer a slow recent run took than the
   * median (the p90 over the median, at least `MIN_RUN_SPREAD_MS`; run-times.ts).
   */
  readonly spreadMs: number;
  /** The margin for a due time's error, as a share of the time to it (learned: how far due times moved earlier). */
  readonly driftShare: number;
}

/**
 * The latest start of a job due at `dueAt` (epoch ms), as late as possible with the jobs due
 * after it: the jobs due no later than each later job `j` (this one, and those between) run in
 * rounds of `slots`, each `plan.runMs`, and are published `plan.spreadMs` times the
 * square root of those rounds (a backlog's runs add their errors) and `plan.driftShare` of the
 * time to it before `j` is due (the earliest-due first, so a job due
 * sooner never waits behind one due later). `undefined` when that start is now or past (less
 * than {@link MIN_HOLD_MS} ahead): run now; else the time to look at the job again (no later
 * than {@link RECHECK_MS} from `now`).
 */
export function holdUntil(dueAt: number, now: number, load: FleetLoad, plan: RunPlan): number | undefined {
  const slots = Math.max(1, load.slots);
  const { runMs, spreadMs, driftShare } = plan;
  // A due time is an estimate at the session's pace: the further it is, the wider its error.
  // Runs in a row add their errors: the spread of `rounds` runs grows as its square root.
  const margin = (due: number, rounds: number) =>
    spreadMs * Math.sqrt(rounds) + driftShare * Math.max(0, due - now);
  let start = dueAt - margin(dueAt, 1) - runMs;
  load.later.forEach((due, i) => {
    const rounds = Math.ceil((i + 2) / slots);
    start = Math.min(start, due - margin(due, rounds) - rounds * runMs);
  });
  if (start - now < MIN_HOLD_MS) return undefined;
  return Math.round(Math.min(start, now + RECHECK_MS));
}

/** A worker's side of the schedule: its slots listed, and the hold of each job it picks. */
export class WorkerSchedule {
  readonly #client: Promise<ScheduleClient>;
  readonly #keys: ScheduleKeys;
  readonly #member: string;
  readonly #concurrency: number;
  /** The fleet's clock (fleet-clock.ts): the agents' due times are on it. */
  readonly #now: () => number;
  #renewal: ReturnType<typeof setInterval> | undefined;

  constructor(
    client: Promise<ScheduleClient>,
    keys: ScheduleKeys,
    id: string,
    concurrency: number,
    now: () => number = Date.now,
  ) {
    this.#client = client;
    this.#keys = keys;
    this.#member = `${id}|${concurrency}`;
    this.#concurrency = concurrency;
    this.#now = now;
  }

  /** Lists the worker's slots now and every third of {@link SLOTS_TTL_MS}. */
  async start(): Promise<void> {
    const renew = async () =>
      run(await this.#client, this.#keys, ['slots', this.#member, this.#now() + SLOTS_TTL_MS]).catch(
        () => {},
      );
    await renew();
    this.#renewal = setInterval(() => void renew(), SLOTS_TTL_MS / 3);
    this.#renewal.unref?.();
  }

  /**
   * Until when `job` (id `jobId`) is held (`until`; absent: run it now) and its listed due time
   * (renewed by its agents); `undefined` to run it now without one (no `dueAt`, no run timed
   * yet, or Redis failed: the schedule never costs a job); `withdrawn`: drop it.
   */
  async hold(
    jobId: string,
    job: PreparationJob,
    plan: RunPlan | undefined,
  ): Promise<{ until: number | undefined; dueAt: number } | 'withdrawn' | undefined> {
    // Not scheduled, but withdrawn all the same when its agent withdrew it (its add late).
    if (job.dueAt === undefined || plan === undefined)
      return (await this.#marked(jobId)) ? 'withdrawn' : undefined;
    const now = this.#now();
    try {
      const answer = (await run(await this.#client, this.#keys, [
        'ahead',
        jobId,
        job.dueAt,
        now,
        now - FORGET_AFTER_MS,
      ])) as (number | string)[];
      if (Number(answer[0]) === -1) return 'withdrawn';
      const slots = Number(answer[0]) || this.#concurrency;
      // The listed due time: the session's agents renew it at each call (a newer estimate).
      const dueAt = Number(answer[1]) || job.dueAt;
      const later = answer.slice(2).map(Number);
      return { until: holdUntil(dueAt, this.#now(), { slots, later }, plan), dueAt };
    } catch {
      return undefined;
    }
  }

  /** Takes a job that ran (to any outcome) off the list; resolves with its listed due time then. */
  async done(jobId: string): Promise<number | undefined> {
    return unlistDue(await this.#client, this.#keys, jobId, this.#now()).catch(() => undefined);
  }

  /** True when `jobId` carries a withdrawal mark (a Redis error: false, the job runs). */
  async #marked(jobId: string): Promise<boolean> {
    try {
      return Number(await run(await this.#client, this.#keys, ['marked', jobId])) === 1;
    } catch {
      return false;
    }
  }

  /** Unlists the worker's slots. */
  async stop(): Promise<void> {
    clearInterval(this.#renewal);
    await run(await this.#client, this.#keys, ['leave', this.#member]).catch(() => {});
  }
}
