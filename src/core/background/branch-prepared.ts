/**
 * Prepared summaries of named branches: a queue job that carries its base's anchor chain
 * (`PreparationJob.baseChain`) serves one branch of its session. A session's forks each resume
 * their own stored state (match-state.ts) and versions grow across branches, so the newest
 * stored version is only one fork's: such a job is fenced by its own branch
 * ({@link branchMovedOn}) and its summary is published beside the other branches' rather than
 * in the session's one slot.
 *
 * The records live under `<key>::prepared-forks`: one {@link SessionState} whose `version`
 * counts its writes (the compare-and-set) and whose `branches` are the prepared records,
 * newest first, at most {@link MAX_BRANCH_RECORDS}: each as in `<key>::prepared` (`version` the
 * base + 1, `coveredIds` the folded ids, `keptIds` their hashes, `summary`, `mac`) with
 * `anchor.chain` the base's anchor chain, which the MAC covers. Publishing refuses a second
 * record of the same base and fold (a retried or duplicated job: the first text stands); two
 * forks at one base that fold different messages each get theirs.
 */

import type { SessionView } from '../preflight/view/session-view.js';
import type { SessionState, SessionStore } from '../session/session-store.js';

/** Prepared records of branches kept at most (the oldest go first). */
export const MAX_BRANCH_RECORDS = 8;

/** Compare-and-set attempts of a publish before it reports the store failed (the job is retried). */
const PUBLISH_ATTEMPTS = 8;

/** The store key of a session's branch records. */
export function branchesKey(key: string): string {
  return `${key}::prepared-forks`;
}

/** The lock a worker holds while it runs the job of fold `fold` (its preparation claim). */
export function branchClaimKey(key: string, fold: string): string {
  return `${key}::prepared@${fold}`;
}

/**
 * True when a view resumes a stored state of its session: the newest one, or a fork's own
 * older one (a view that parts from the newest state is `mismatch` even then). A branch's
 * preparation names the state it extends, so it serves such a view too; one that resumes
 * nothing (another conversation under the id) gets none.
 */
export function resumesStored(view: Pick<SessionView, 'matched' | 'mismatch'>): boolean {
  return !view.mismatch || view.matched !== undefined;
}

/** The anchor chain of the stored state a view resumes (`''`: none, or one without an anchor). */
export function baseChainOf(view: Pick<SessionView, 'matched'>): string {
  return view.matched?.anchor?.chain ?? '';
}

/** What names a branch's preparation: the state it extends and what it folds. */
export interface BranchFold {
  readonly baseVersion: number;
  readonly baseChain: string;
  readonly foldedIds: readonly string[];
  readonly foldedHashes: readonly string[];
}

/**
 * True when the branch a preparation extends moved on in the stored `record`: its base state
 * (version and anchor chain) is no longer stored, or a newer state covers its last folded
 * message (that fork compacted past what the preparation folds). A state of another fork
 * covers none of this fork's own messages: it leaves the preparation alone.
 */
export function branchMovedOn(record: SessionState | undefined, fold: BranchFold): boolean {
  const states = record ? [record, ...(record.branches ?? [])] : [];
  const { baseVersion, baseChain } = fold;
  const stored = (state: SessionState) =>
    state.version === baseVersion && (state.anchor?.chain ?? '') === baseChain;
  if (baseVersion > 0 && !states.some(stored)) return true;
  const last = fold.foldedIds.at(-1);
  return last !== undefined && states.some((s) => s.version > baseVersion && s.coveredIds.includes(last));
}

function sameList(a: readonly string[] | undefined, b: readonly string[]): boolean {
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** True when `record` is the prepared record of `fold` (same base, same folded messages). */
function sameFold(record: SessionState, fold: BranchFold): boolean {
  return (
    record.version === fold.baseVersion + 1 &&
    (record.anchor?.chain ?? '') === fold.baseChain &&
    sameList(record.coveredIds, fold.foldedIds) &&
    sameList(record.keptIds, fold.foldedHashes)
  );
}

/** True when a record of `fold` is published (a store failure throws). */
export async function branchPublished(store: SessionStore, key: string, fold: BranchFold): Promise<boolean> {
  const current = await store.get(branchesKey(key));
  return (current?.branches ?? []).some((record) => sameFold(record, fold));
}

/**
 * Publishes `record` (a prepared record of `fold`, signed) among the session's branch records:
 * `'taken'` when one of the same fold stands, `'failed'` when the store failed or kept changing.
 */
export async function publishBranch(
  store: SessionStore,
  key: string,
  record: SessionState,
  fold: BranchFold,
): Promise<'published' | 'taken' | 'failed'> {
  try {
    for (let attempt = 0; attempt < PUBLISH_ATTEMPTS; attempt++) {
      const current = await store.get(branchesKey(key));
      const records = current?.branches ?? [];
      if (records.some((held) => sameFold(held, fold))) return 'taken';
      const version = current?.version ?? 0;
      const next: SessionState = {
        sessionId: branchesKey(key),
        version: version + 1,
        coveredIds: [],
        branches: [record, ...records].slice(0, MAX_BRANCH_RECORDS),
        updatedAt: Date.now(),
      };
      if (await store.set(branchesKey(key), next, { expectedVersion: version })) return 'published';
    }
    return 'failed';
  } catch {
    return 'failed';
  }
}

/** The branch records of `branches` published for the view's base (its version and chain). */
export function branchCandidates(branches: SessionState | undefined, view: SessionView): SessionState[] {
  if (!resumesStored(view)) return [];
  const chain = baseChainOf(view);
  return (branches?.branches ?? []).filter(
    (record) =>
      record.summary !== undefined &&
      record.version === view.version + 1 &&
      (record.anchor?.chain ?? '') === chain,
  );
}
