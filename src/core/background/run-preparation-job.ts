/**
 * What a queue worker does with one {@link PreparationJob}: summarize it with the configured
 * chain and publish the summary in the session store. Fenced by the session's version: a job
 * whose session moved on (compacted since, by anyone) is dropped before the summarizer runs
 * and again before publishing, a job whose version someone already published (a retried
 * or duplicated job) is not summarized twice, and a job that could not be published before
 * its deadline (the agent's trigger) is not summarized at all. Publishing is a compare-and-set (one text per
 * version, the first wins) and the record is signed with the installation's summary key. The agent swaps a published summary in only
 * when it still covers a prefix of its history (shared-preparation.ts), and its compaction's
 * compare-and-set on the version applies it at most once. While it summarizes and publishes,
 * the worker holds the session's preparation claim (the `<key>::prepared` lock, until the job's
 * deadline at most): the agent at its trigger then waits for this summary instead of writing
 * one itself, and a job whose version the agent claimed first (it compacts without a prepared
 * summary) is not summarized.
 *
 * A job that names its branch (`baseChain`, `fold`: a session's forks each resume their own
 * state, and versions grow across branches) is fenced by that branch instead of the newest
 * version (branch-prepared.ts: its base still stored, no newer state covering its last folded
 * message), published among the session's branch records, and claimed under its fold's lock
 * (`<key>::prepared@<fold>`): another fork's run or trigger neither fences nor blocks it. A
 * job without them (an agent from before) runs as described above.
 */

import type { TokenCounter } from '../counting/token-counter.js';
import { CompactError } from '../errors.js';
import { type SummarizeEmit, summarizeWithFallback } from '../preflight/cascade/summarize-remainder.js';
import { checkSummaryOutput } from '../preflight/cascade/summary-output.js';
import { type PreparationJob, QUEUE_SUMMARIZER_PREFIX } from '../queues/preparation-queue.js';
import type { Redactor } from '../redaction/redactor.js';
import type { SessionLock, SessionStore } from '../session/session-store.js';
import type { Summarizer } from '../summary/summarizer.js';
import type { SummaryMarks } from '../summary/summary-mark.js';
import { branchClaimKey, branchMovedOn, branchPublished } from './branch-prepared.js';
import { preparedKey, publishedVersion, publishPrepared } from './shared-preparation.js';

/** What a worker needs to run jobs. */
export interface PreparationJobDeps {
  /** The session store the agents use (read for the fence, written with the summary). */
  readonly store: SessionStore;
  /** The summarizers tried in turn; a job whose chain all fails throws (the queue retries it). */
  readonly chain: readonly Summarizer[];
  readonly counter: TokenCounter;
  /** Time limit of one job's summarization, in milliseconds. */
  readonly timeoutMs: number;
  /** Redacts the summary written (the job's input was redacted by the agent). */
  readonly redact: Redactor | undefined;
  /** Receives the summarizer's events (`compact.summary_created`, `compact.error`, `compact.circuit`). */
  readonly emit: SummarizeEmit;
  /**
   * Signs the published record with the installation's summary key: the agents adopt only a
   * record whose MAC verifies under their key.
   */
  readonly marks: SummaryMarks;
  readonly signal?: AbortSignal;
  /**
   * How long a run takes from now until its summary is published, as the worker has measured
   * it (`undefined`: not known yet). A job whose `deadline` comes sooner is dropped unsummarized.
   */
  readonly expectedMs?: () => number | undefined;
  /** How long the queue's schedule held the job before this run (ms), told in the record. */
  readonly heldMs?: number;
}

/**
 * `published`: the summary is in the store. `superseded`: the session's version moved past
 * the job's (or the store holds a newer preparation): nothing was written. `already_prepared`:
 * this version's summary was published before (by another run of the same job). `expired`:
 * the summary could not be published before the job's deadline (the session's expected
 * trigger, where the agent compacts without it): not summarized. A job whose session's
 * preparation is claimed (the agent compacts that version at its trigger, or another run of
 * the job is under way) is `superseded` too, unsummarized.
 */
export type PreparationJobResult = 'published' | 'superseded' | 'already_prepared' | 'expired';

/** Why the job must not run (or publish) now, or `undefined` when it may. */
async function fence(store: SessionStore, job: PreparationJob): Promise<PreparationJobResult | undefined> {
  // A failing store throws: the queue retries the job later.
  const state = await store.get(job.key);
  const branch = branchOf(job);
  // A job that names its branch: fenced by it, not by the newest version (another fork's).
  if (branch) {
    if (branchMovedOn(state, branch)) return 'superseded';
    return (await branchPublished(store, job.key, branch)) ? 'already_prepared' : undefined;
  }
  if ((state?.version ?? 0) !== job.baseVersion) return 'superseded';
  const published = await publishedVersion(store, job.key);
  if (published === undefined || published < job.baseVersion) return undefined;
  return published === job.baseVersion ? 'already_prepared' : 'superseded';
}

/** The branch a job names (its base's chain and what it folds), or none: an older agent's job. */
function branchOf(job: PreparationJob) {
  return job.baseChain === undefined ? undefined : { ...job, baseChain: job.baseChain };
}

/** The lock of a job's preparation claim: its fold's for a job that names its branch, else the session's. */
function claimKey(job: PreparationJob): string {
  return job.baseChain !== undefined && job.fold ? branchClaimKey(job.key, job.fold) : preparedKey(job.key);
}

/** True when nobody holds the session's preparation claim (probed: taken and let go at once). */
async function sessionClaimFree(store: SessionStore, key: string): Promise<boolean> {
  const probe = await store.acquireLock(preparedKey(key), WORKER_CLAIM_TTL_MS);
  await probe?.release().catch(() => false);
  return probe !== undefined;
}

/**
 * How long a worker's claim on a session's preparation lives (renewed every third of it while
 * the job runs): a dead worker's claim lapses within it, and the agent at its trigger stops
 * waiting for that worker's summary.
 */
export const WORKER_CLAIM_TTL_MS = 1_500;

/** Runs one job (see the module's comment); throws when every summarizer failed or the store did. */
export async function runPreparationJob(
  job: PreparationJob,
  deps: PreparationJobDeps,
): Promise<PreparationJobResult> {
  const before = await fence(deps.store, job);
  if (before) return before;
  // A summary that would land after the agent's trigger is work for nothing (issue 46).
  const expectedMs = deps.expectedMs?.();
  if (job.deadline !== undefined && expectedMs !== undefined && Date.now() + expectedMs > job.deadline)
    return 'expired';
  // The session's preparation claim: held by the agent compacting this version at its trigger
  // (or by another run of this job), the job is superseded; held here, the agent at its
  // trigger waits for this summary instead of writing one itself.
  const claim = await deps.store.acquireLock(claimKey(job), WORKER_CLAIM_TTL_MS);
  if (!claim) return 'superseded';
  // A job under its fold's claim: the session's claim held means a trigger compacts without a
  // prepared summary (a process that has no job of its own claims the session's), or a worker
  // from before runs: superseded, as then.
  if (claimKey(job) !== preparedKey(job.key) && !(await sessionClaimFree(deps.store, job.key))) {
    await claim.release().catch(() => false);
    return 'superseded';
  }
  const held = holdClaim(claim, job.deadline);
  try {
    // Fenced again under the claim: a trigger may have compacted it just before.
    return (await fence(deps.store, job)) ?? (await summarizeAndPublish(job, deps));
  } finally {
    await held.end();
  }
}

/**
 * Keeps a run's claim alive (renewed every third of its time to live) until the run ends or
 * the job's `deadline` passes, whichever is first. Past the deadline the agent compacts at its
 * trigger without this summary (the deadline's meaning): the claim is let go, so a trigger
 * waiting for a run that hangs stops waiting and claims the version itself. The run goes on;
 * its publish is fenced like any late one.
 */
function holdClaim(claim: SessionLock, deadline: number | undefined): { end: () => Promise<void> } {
  let released: Promise<unknown> | undefined;
  const letGo = () => {
    clearInterval(renew);
    clearTimeout(due);
    released ??= claim.release().catch(() => false);
    return released;
  };
  const renew = setInterval(() => void claim.renew().catch(() => false), WORKER_CLAIM_TTL_MS / 3);
  const due = deadline === undefined ? undefined : setTimeout(letGo, Math.max(0, deadline - Date.now()));
  return { end: async () => void (await letGo()) };
}

async function summarizeAndPublish(
  job: PreparationJob,
  deps: PreparationJobDeps,
): Promise<PreparationJobResult> {
  const outcome = await summarizeWithFallback(
    {
      chain: deps.chain,
      timeoutMs: deps.timeoutMs,
      counter: deps.counter,
      redact: deps.redact,
      emit: deps.emit,
    },
    {
      sessionId: job.sessionId,
      strategy: job.strategy,
      messages: job.messages,
      maxTokens: job.maxTokens,
      ...(job.previousSummary ? { previousSummary: job.previousSummary } : {}),
      ...(job.agent ? { agent: job.agent } : {}),
      ...(job.withAssistant ? { withAssistant: true } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
    job.baseVersion + 1,
    checkSummaryOutput,
  );
  if (!outcome)
    throw new CompactError('summarizer_failed', `no summarizer of the chain (${chainNames(deps)}) answered`);
  // The session may have been compacted while the summarizer ran: a late summary is dropped.
  const after = await fence(deps.store, job);
  if (after) return after;
  const written = await publishPrepared(
    deps.store,
    job.key,
    {
      baseVersion: job.baseVersion,
      ...(job.baseChain === undefined ? {} : { baseChain: job.baseChain }),
      foldedIds: job.foldedIds,
      foldedHashes: job.foldedHashes,
      outcome: { ...outcome, summarizer: `${QUEUE_SUMMARIZER_PREFIX}${outcome.summarizer}` },
    },
    { marks: deps.marks },
    deps.heldMs,
    // On this process's clock, as the job's `enqueuedAt` is (the queue moved it here).
    Math.max(0, Date.now() - job.enqueuedAt - (deps.heldMs ?? 0)),
  );
  if (written === 'failed')
    throw new CompactError('storage_failed', 'the prepared summary could not be published');
  // Another run published this version first (compare-and-set): its text stands.
  return written === 'taken' ? 'already_prepared' : 'published';
}

function chainNames(deps: PreparationJobDeps): string {
  return deps.chain.map((summarizer) => summarizer.name).join(', ');
}
