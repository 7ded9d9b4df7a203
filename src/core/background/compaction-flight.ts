/**
 * How a triggered compaction flies when several callers want it: under the session's lock
 * when the store is shared (one process summarizes, the others find the version moved and
 * answer with it), with a summary prepared in the background swapped in when it fits; and
 * the per-agent compactors that keep their own state over one shared history.
 */

import { invalidConfig } from '../errors.js';
import type { AgentCompactorOptions, CompactManagerOptions } from '../manager/manager-options.js';
import type { CompactPolicy } from '../policy.js';
import { summaryReserve } from '../preflight/cascade/plan-summary.js';
import { cheapLevelsReachTarget } from '../preflight/cascade/swap-prepared.js';
import { requestShowsAssistant } from '../preflight/index/request-shows-assistant.js';
import type { PipelineDeps, PreparedRequest } from '../preflight/prepare-request.js';
import { type Compacted, runTriggered } from '../preflight/run-preflight.js';
import { withSessionLock } from '../session/session-lock.js';
import { MemorySessionStore, type SessionStore } from '../session/session-store.js';
import type { Summarizer } from '../summary/summarizer.js';
import type { BackgroundPreparations } from './background-preparation.js';
import { resumesStored } from './branch-prepared.js';

/** The default time to live of the session lock a compaction holds. */
export const DEFAULT_LOCK_TTL_MS = 10_000;

/** The state key of an agent with its own compactor: `<sessionId>::agent::<agent>`. */
export function agentStateKey(sessionId: string, agent: string): string {
  return `${sessionId}::agent::${agent}`;
}

/** The session lock's time to live, or undefined when compactions take no lock. */
export function lockTtl(
  option: CompactManagerOptions['sessionLock'],
  store: SessionStore,
): number | undefined {
  if (option === false) return undefined;
  // A store of this process only is served by the manager's per-session queue: no lock needed.
  if (option === undefined && store instanceof MemorySessionStore) return undefined;
  const ttl = (option === true || option === undefined ? undefined : option.ttlMs) ?? DEFAULT_LOCK_TTL_MS;
  if (!Number.isInteger(ttl) || ttl <= 0)
    throw invalidConfig('sessionLock.ttlMs', 'must be a positive integer (milliseconds)');
  return ttl;
}

/** A registered agent's pipeline (its summarizer chain and time limit) and policy overrides. */
export interface AgentCompactor {
  readonly deps: PipelineDeps;
  readonly policy?: Partial<CompactPolicy>;
}

/** Builds agent `name`'s compactor over the manager's pipeline (caches and store shared). */
export function agentCompactor(
  name: string,
  agent: AgentCompactorOptions,
  base: PipelineDeps,
  embedded: Summarizer,
  timeoutMs: number,
): AgentCompactor {
  if (agent === null || typeof agent !== 'object') throw invalidConfig(`agents.${name}`, 'must be an object');
  const summarizer = agent.summarizer ?? base.chain[0]!;
  const agentTimeout =
    agent.summarizerTimeoutMs ??
    (agent.summarizer ? Math.max(timeoutMs, (summarizer.maxDurationMs ?? 0) + 1000) : timeoutMs);
  if (!(agentTimeout > 0))
    throw invalidConfig(`agents.${name}.summarizerTimeoutMs`, 'must be a positive number');
  const chain = summarizer === embedded ? [embedded] : [summarizer, embedded];
  return {
    deps: { ...base, chain, summarizerTimeoutMs: agentTimeout },
    ...(agent.policy ? { policy: { ...agent.policy } } : {}),
  };
}

/**
 * Starts a background preparation when the request passed its session's threshold (learned:
 * a lead time ahead of the trigger; else `prepareAtPct`), unless it could not be ready before
 * the trigger anyway (never awaited).
 */
export function maybePrepare(
  background: BackgroundPreparations,
  deps: PipelineDeps,
  prepared: PreparedRequest,
): void {
  const { policy, view, key, tokensBefore, decision } = prepared;
  // A count decided from a bound (its view holds bounds): the next call, counted exactly, prepares.
  if (prepared.bounded) return;
  const threshold = background.threshold(key, {
    version: view.version,
    tokens: tokensBefore,
    now: deps.clock(),
    trigger: decision.triggerTokens,
    floor: decision.targetTokens,
    fixed: policy.prepareAtPct * prepared.maxContextTokens,
  });
  // A fork resuming its own state (not the newest) prepares too: its preparation names its branch.
  if (tokensBefore < threshold.tokens || !resumesStored(view)) return;
  if (background.tooLate(key, view.version, tokensBefore, decision.triggerTokens)) return;
  const due = background.deadline(key, tokensBefore, decision.triggerTokens);
  const started = background.start(
    prepared.key,
    {
      sessionId: prepared.context.sessionId,
      view,
      policy,
      codec: prepared.codec,
      foldAtLeast: foldAtLeast(prepared),
      summarize: {
        chain: deps.chain,
        timeoutMs: deps.summarizerTimeoutMs,
        counter: deps.counter,
        redact: deps.summarizerRedact,
      },
      ...(prepared.options.agent ? { agent: prepared.options.agent } : {}),
      ...(requestShowsAssistant(prepared.indexed, prepared.options) ? { withAssistant: true } : {}),
      ...(due ?? {}),
    },
    threshold,
  );
  // Its job pending: the queue hears the session's newer estimate of its trigger.
  if (!started && due) background.reschedule(prepared.key, view, due.dueAt);
}

/**
 * What a preparation folds at least: the growth still to come before the trigger plus what
 * the trigger sheds to reach the target, plus the summary's room (local token units).
 */
function foldAtLeast(prepared: PreparedRequest): number {
  const { triggerTokens, targetTokens } = prepared.localDecision;
  return (
    Math.max(0, triggerTokens - targetTokens) +
    summaryReserve(prepared.policy, targetTokens, prepared.summaryTokens)
  );
}

/** True when clearing and shortening alone bring `prepared` to its target (a dry run). */
function cheapLevelsSuffice(deps: PipelineDeps, prepared: PreparedRequest): Promise<boolean> {
  const { indexed, codec } = prepared;
  const pairing = { pairer: indexed.pairer, items: indexed.items };
  const context = { codec, counter: deps.counter, ...pairing, archived: deps.archive.keepsArtifacts };
  return cheapLevelsReachTarget({
    view: prepared.view,
    pairing,
    policy: prepared.policy,
    decision: prepared.localDecision,
    tokensBefore: prepared.localTokensBefore,
    realize: (item, rewrite) => deps.rewrites.get(context, item, rewrite),
  });
}

/**
 * How many times a triggered compaction reloads the stored state when another process
 * compacted first before it answers the call locally (a compaction not stored, as during a
 * store outage): contention never throws to the agent.
 */
export const MAX_COMPACTION_RELOADS = 2;

/** What {@link runTriggeredOnce} needs from the manager. */
export interface Flight {
  readonly store: SessionStore;
  /** The session lock's time to live; undefined: no lock (the write is still a compare-and-set). */
  readonly lockTtlMs: number | undefined;
  readonly background: BackgroundPreparations | undefined;
  /** True while the store is down (calls go on from this process's copies). */
  readonly storeDown?: () => boolean;
  /** Lets the next store operation try the store at once (no cool-down after a fault). */
  readonly retryStore?: () => void;
}

/**
 * A triggered compaction under the session's lock, shared by every process using the
 * store: one of them compacts; the others find the version moved and return `'retry'`
 * (their retry then sees the new view). A prepared summary is swapped in when it fits.
 * Without the lock in time (its holder is stuck), the write still is a compare-and-set.
 */
export async function runTriggeredOnce(
  flight: Flight,
  deps: PipelineDeps,
  prepared: PreparedRequest,
  reloads = 0,
): Promise<Compacted | 'retry' | 'declined'> {
  try {
    return await flyTriggered(flight, deps, prepared, reloads);
  } finally {
    // A preparation claim the trigger took (queue: it compacted without a prepared summary) ends here.
    flight.background?.release(prepared.key);
  }
}

async function flyTriggered(
  flight: Flight,
  deps: PipelineDeps,
  prepared: PreparedRequest,
  reloads: number,
): Promise<Compacted | 'retry' | 'declined'> {
  const { key, options } = prepared;
  // The prepared summary is taken only by the process that compacts (under the lock).
  // A manual compaction summarizes with its note: a prepared summary does not serve it.
  // Cheap levels first: when they reach the target alone (as the synchronous cascade would
  // find), no prepared summary is taken or waited for; it stays for the next trigger.
  const take = async () => {
    if (options.force || !flight.background || (await cheapLevelsSuffice(deps, prepared))) return {};
    const summary = await flight.background.take(key, prepared.view, options.signal);
    return summary ? { prepared: summary } : {};
  };
  // While the store is down no process can claim the next version: a request that still fits
  // the budget is sent as it is (compacted once the store answers); one that does not fit gets
  // a local answer, whose summary claims no version, so no version gets a text of this process
  // only (see SessionState.local).
  if (flight.storeDown?.()) {
    if (!options.force && prepared.tokensBefore <= prepared.decision.budget) return 'declined';
    // Before claiming a version alone, the store is asked once more (it may be back already).
    flight.retryStore?.();
  }
  // The store moved under every reload: this call gets a sound answer that is not stored.
  if (reloads >= MAX_COMPACTION_RELOADS)
    return runTriggered(deps, prepared, { ...(await take()), local: { reloads } });
  // The store is down: a local answer, which claims no version (SessionState.local).
  const outage = async () =>
    runTriggered(deps, prepared, { ...(await take()), local: { reloads, outage: true } });
  if (flight.lockTtlMs === undefined)
    return flight.storeDown?.() ? outage() : runTriggered(deps, prepared, await take());
  const seen = prepared.state?.version ?? 0;
  const locked = await withSessionLock(
    flight.store,
    key,
    { ttlMs: flight.lockTtlMs, ...(options.signal ? { signal: options.signal } : {}) },
    async (lock) => {
      // A lock of this process only (a negative token): the store could not give one.
      if (lock.token < 0 || flight.storeDown?.()) return outage();
      const current = await flight.store.get(key);
      if ((current?.version ?? 0) !== seen) return 'retry' as const;
      return runTriggered(deps, prepared, { ...(await take()), fencingToken: lock.token });
    },
  );
  if (locked.acquired) return locked.value;
  return flight.storeDown?.() ? outage() : runTriggered(deps, prepared, await take());
}
