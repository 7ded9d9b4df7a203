/**
 * What a `CompactManager` holds in memory between calls, and how it is freed: per session
 * (`endSession`, `reset`) or all at once (`shutdown`). The manager owns these objects; the
 * functions here only walk them, so the manager reads as a list of calls.
 */
import type { BackgroundPreparations } from '../background/background-preparation.js';
import { branchesKey } from '../background/branch-prepared.js';
import { agentStateKey } from '../background/compaction-flight.js';
import { preparedKey } from '../background/shared-preparation.js';
import type { UsageLedger } from '../counting/usage-ledger.js';
import type { MessageIndex } from '../messages/message-index.js';
import type { IndexedHistory } from '../preflight/index/index-request.js';
import { forgetSession, type PipelineDeps } from '../preflight/prepare-request.js';
import type { FailOpenStore } from '../store/fail-open-store.js';
import { deleteStoredCounts } from '../store/stored-counts.js';

/** The manager's in-memory parts that outlive one call. */
export interface ManagerMemory {
  readonly deps: PipelineDeps;
  readonly index: MessageIndex;
  readonly agents: ReadonlyMap<string, unknown>;
  readonly usage: UsageLedger;
  readonly background: BackgroundPreparations | undefined;
  readonly failOpen: FailOpenStore | undefined;
  /** Time to live of the session lock, or undefined when compactions take no lock. */
  readonly lockTtlMs: number | undefined;
}

/** What the manager holds in memory between calls (`CompactManager.cacheStatus`). */
export interface CacheStatus {
  /** Sessions with an indexed history. */
  sessions: number;
  /** Their approximate bytes (capped by `cacheMaxBytes`), in-process state copies included. */
  bytes: number;
  /** Parsed messages in the shared content cache. */
  cachedMessages: number;
  /** Their approximate bytes (capped by `cacheMaxBytes` too). */
  cachedMessageBytes: number;
  /** In-process copies of stored states (fail-open). */
  storedStates: number;
}

/** The state keys of a session: its own and one per agent with its own compactor. */
export function sessionKeys(memory: ManagerMemory, sessionId: string): string[] {
  return [sessionId, ...[...memory.agents.keys()].map((agent) => agentStateKey(sessionId, agent))];
}

/** Options of `CompactManager.endSession`. */
export interface EndSessionOptions {
  /**
   * The conversation is over, not only leaving this process's memory: its preparation job
   * still waiting in the queue (`preparationQueue`) is withdrawn, as nothing will use it.
   * Leave it off when the session may go on (on another process behind a load balancer, or
   * later): the job's summary is used at its trigger there. @default false
   */
  closed?: boolean;
}

/** Frees a session's memory for it and its agents' compactors; its stored state stays. */
export function endSessionMemory(
  memory: ManagerMemory,
  sessionId: string,
  options: EndSessionOptions = {},
): void {
  for (const key of sessionKeys(memory, sessionId)) {
    forgetParses(memory, key);
    forgetSession(memory.deps, key);
    memory.deps.counts.forget(key);
    memory.background?.discard(key, Number.POSITIVE_INFINITY, options.closed === true);
    memory.failOpen?.forget(key);
    memory.failOpen?.forget(preparedKey(key));
  }
  memory.usage.delete(sessionId);
}

/** Drops the parses and realized rewrites of a session's messages from the shared caches. */
function forgetParses(memory: ManagerMemory, key: string): void {
  for (const history of [key, `${key}\u0000repaired`]) {
    if (!memory.deps.histories.has(history)) continue;
    const items = memory.deps.histories.get(history).items;
    memory.index.forget(items.map((item) => item.entry));
    memory.deps.rewrites.forget(items);
  }
}

/** Frees a session's memory and deletes its stored state (and its shared preparation). */
export async function resetSession(memory: ManagerMemory, sessionId: string): Promise<void> {
  for (const key of sessionKeys(memory, sessionId)) {
    forgetParses(memory, key);
    forgetSession(memory.deps, key);
    // The jobs it had, up to its stored version, are freed for a conversation that reuses the id.
    const stored = memory.background ? await memory.deps.store.get(key).catch(() => undefined) : undefined;
    // Its stored state goes: a job of its old version must not be published for it.
    memory.background?.discard(key, Number.POSITIVE_INFINITY, true);
    memory.usage.delete(sessionId);
    memory.deps.counts.forget(key);
    await memory.deps.store.delete(key);
    await deleteStoredCounts(memory.deps.store, key);
    if (memory.background && memory.lockTtlMs !== undefined) {
      await memory.deps.store.delete(preparedKey(key));
      await memory.deps.store.delete(branchesKey(key));
    }
    await memory.background?.forget(key, stored?.version ?? 0);
  }
}

/**
 * A session the caps dropped from the histories: the rest of what it holds goes too, its
 * parses in the shared content cache first (nothing else would find them: `endSession` walks
 * the histories still held).
 */
export function forgetEvicted(memory: ManagerMemory, key: string, history: IndexedHistory): void {
  memory.index.forget(history.items.map((item) => item.entry));
  memory.deps.rewrites.forget(history.items);
  if (key.endsWith('\u0000repaired')) return;
  memory.deps.counts.forget(key);
  memory.deps.calibration.forget(key);
  memory.failOpen?.forget(key);
}

/** Frees every session's memory (shutdown). */
export function freeMemory(memory: ManagerMemory): void {
  memory.deps.histories.clear();
  memory.index.clear();
  memory.deps.rewrites.clear();
  memory.deps.systemCounts.clear();
  memory.deps.calibration.clear();
  memory.deps.lastCalls.clear();
  memory.deps.counts.clear();
  memory.deps.fallbackStreaks.clear();
  memory.usage.clear();
  memory.failOpen?.clear();
}

/** Counters of what the manager holds in memory. */
export function cacheStatus(memory: ManagerMemory): CacheStatus {
  return {
    sessions: memory.deps.histories.size,
    bytes: memory.deps.histories.bytes + (memory.failOpen?.bytes ?? 0),
    cachedMessages: memory.index.size,
    cachedMessageBytes: memory.index.bytes,
    storedStates: memory.failOpen?.size ?? 0,
  };
}
