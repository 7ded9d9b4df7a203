/**
 * Level c's plan: which units stay verbatim (the suffix, grown to what the target holds, and
 * the user's own words before it) and how much room the summary gets.
 */

import { ChunkedList, type Positional } from '../../chunked-list.js';
import type { IndexedMessage } from '../../messages/message-index.js';
import type { CompactPolicy } from '../../policy.js';
import { ShardedMap } from '../../sharded-map.js';
import { runSteps, type Steps, type TimeSlice } from '../../time-slice.js';
import type { ViewEntry } from '../view/session-view.js';
import { buildUnitsSteps, policySuffixStart, type Unit } from './build-units.js';
import type { CascadeRun } from './cascade-types.js';
import { isUserText, pickUserText } from './rank-user-text.js';

/** What the plan reads of the cascade's input. */
export interface PlanInput {
  readonly policy: Readonly<CompactPolicy>;
  readonly force: boolean;
  /** Tokens of the current summary message (0 without one). */
  readonly summaryTokens: number;
}

export interface SummaryPlan {
  /** Index in `run.entries` where the verbatim suffix starts (unpinned entries before it are folded). */
  foldBefore: number;
  /** Indexes in `run.entries` before `foldBefore` kept verbatim: the user's own text messages. */
  keep: ReadonlySet<number>;
  maxTokens: number;
  /**
   * The built-in summarizer's limit: `maxTokens`, or the room the suffix leaves under the
   * target when that is more (it fills it; an LLM summarizer keeps `maxTokens`).
   */
  fillTokens: number;
}

/**
 * Room kept for the summary while the suffix is chosen: up to 30% of the target, and no less
 * than the previous version's body (`previousTokens`, up to `maxSummaryTokens` and half the
 * target). A round that gives the summary less than the last one drops lines that never come
 * back (the rolling eval lost 12 of 24 planted facts in one squeezed round), so older tool
 * rounds of the current turn are folded instead; the latest turn is never cut for it.
 */
export function summaryReserve(
  policy: Readonly<CompactPolicy>,
  target: number,
  previousTokens = 0,
  cap = 1,
): number {
  const share = Math.min(policy.maxSummaryTokens, Math.max(256, Math.floor(target * 0.3)));
  const keep = Math.min(previousTokens, policy.maxSummaryTokens, Math.floor(target * cap));
  return Math.max(share, keep);
}

/** Squeezed by an oversized latest turn, the summary keeps its previous size up to this share of the target. */
const SQUEEZED_KEEP_CAP = 0.5;

/**
 * Picks the verbatim suffix: the policy window grown while the request fits the target (what
 * the target can hold stays verbatim), or shrunk until it does.
 */
export function planSummary(run: CascadeRun, input: PlanInput, overhead: number): SummaryPlan | undefined {
  return runSteps(planSummarySteps(run, input, overhead));
}

/** {@link planSummary} as {@link Steps}: a pause every few dozen units looked at. */
export function* planSummarySteps(
  run: CascadeRun,
  input: PlanInput,
  overhead: number,
): Steps<SummaryPlan | undefined> {
  const plan = yield* planContextSteps(run, input, overhead);
  if (!plan) return undefined;
  const { units } = plan;
  const start = firstStart(plan);
  const at: SuffixState = {
    start,
    suffix: units.slice(start).reduce((sum, unit) => sum + unit.tokens, 0),
    userBefore: 0,
  };
  for (let u = 0; u < start; u++) {
    if (u % 64 === 63) yield;
    if (plan.isUser(u)) at.userBefore += units[u]!.tokens;
  }
  fitSuffix(plan, at);
  if (at.start === 0) return undefined;
  // Kept user text never pushes the request over the budget (level d would cut the suffix).
  const userRoom = Math.min(
    plan.userBudget,
    Math.max(0, run.budget - plan.fixed - overhead - at.suffix - 64),
  );
  const candidates = new ChunkedList<number>();
  for (let u = 0; u < at.start; u++) {
    if (u % 64 === 63) yield;
    if (plan.isUser(u)) candidates.push(u);
  }
  const picked = pickUserText(candidates, units, userRoom);
  return finalPlan(plan, at, picked);
}

/** The units the plan works on and the sums every step reads. */
interface PlanContext {
  readonly run: CascadeRun;
  readonly input: PlanInput;
  readonly overhead: number;
  /** Index in `run.entries` of each unpinned entry. */
  readonly unpinned: Positional<number>;
  readonly units: readonly Unit[];
  /** Tokens of the request outside the unpinned units and the current summary. */
  readonly fixed: number;
  /** Tokens of the current summary's body. */
  readonly previousBody: number;
  readonly reserve: number;
  /** Tokens of the user's own words before the suffix that may stay verbatim. */
  readonly userBudget: number;
  /** Unit `u` is one user text message. */
  readonly isUser: (u: number) => boolean;
}

/** The verbatim suffix being chosen: from unit `start`, `suffix` tokens, `userBefore` of user text before it. */
interface SuffixState {
  start: number;
  suffix: number;
  userBefore: number;
}

/** Entries looked at between two steps of {@link planContextSteps}' first pass. */
const STEP_ENTRIES = 1_024;

/** The plan's units (the unpinned entries grouped) and sums; `undefined` with no unit. */
function* planContextSteps(
  run: CascadeRun,
  input: PlanInput,
  overhead: number,
): Steps<PlanContext | undefined> {
  // Chunked: two lists of 300k pushed in step grew at the same entry (issue 47).
  const unpinned = new ChunkedList<number>();
  const unpinnedEntries = new ChunkedList<ViewEntry>();
  for (let k = 0; k < run.entries.length; k++) {
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    const entry = run.entries[k]!;
    if (entry.pinned) continue;
    unpinned.push(k);
    unpinnedEntries.push(entry);
  }
  yield;
  // In steps: 16k entries' units at once held the loop over 20 ms under load (issue 47).
  const units = yield* buildUnitsSteps(unpinnedEntries);
  if (units.length === 0) return undefined;
  const { policy } = input;
  const unpinnedTokens = units.reduce((sum, unit) => sum + unit.tokens, 0);
  // Room kept for the summary while the suffix shrinks (see summaryReserve), from the previous
  // body: the message's tags and role overhead are `overhead`, counted apart.
  const previousBody = input.summaryTokens - overhead;
  // Memoized: the check scans the text for library tags, and the loops ask more than once.
  // 0 not asked yet, 1 no, 2 yes: an array of the units' size (a Map of 300k units grew in
  // one `set` that held the loop ~17 ms).
  const userUnits = new Uint8Array(units.length);
  const isUser = (u: number) => {
    const asked = userUnits[u]!;
    if (asked !== 0) return asked === 2;
    const unit = units[u]!;
    const known = unit.start === unit.end && unit.startsTurn && isUserText(unpinnedEntries.at(unit.start)!);
    userUnits[u] = known ? 2 : 1;
    return known;
  };
  return {
    run,
    input,
    overhead,
    unpinned,
    units,
    fixed: run.total - unpinnedTokens - input.summaryTokens,
    previousBody,
    reserve: summaryReserve(policy, run.target, previousBody),
    // The user's own words before the suffix stay verbatim up to their share of the target.
    userBudget: Math.floor(run.target * policy.userTextShare),
    isUser,
  };
}

/** The policy window's first unit. */
function firstStart({ units, input }: PlanContext): number {
  const { policy } = input;
  const start = policySuffixStart(units, policy.keepRecentTurns, policy.keepToolIoPairs);
  // A forced (manual) compaction whose policy window covers everything keeps the last turn only.
  if (start === 0 && input.force)
    return Math.max(
      0,
      units.findLastIndex((unit) => unit.startsTurn),
    );
  return start;
}

/** The request with this suffix, the summary's reserve and the user text before it is over `limit`. */
function over(plan: PlanContext, at: SuffixState, limit: number): boolean {
  const { fixed, overhead, reserve, userBudget } = plan;
  return fixed + overhead + reserve + Math.min(userBudget, at.userBefore) + at.suffix > limit;
}

/** Grows the suffix while the target holds it, then shrinks it toward the target or budget. */
function fitSuffix(plan: PlanContext, at: SuffixState): void {
  const { run, input, units, fixed, overhead, reserve, userBudget, isUser } = plan;
  // Shrink toward the target, but keep the current user turn whole while it fits the budget:
  // its question must not be folded away; past it, shrink only to fit the budget.
  const lastTurn = units.findLastIndex((unit) => unit.startsTurn);
  // A latest turn without tool rounds (the user's message and a reply) is the least that is
  // kept: past it nothing is folded; level d cuts it, or the budget is insufficient.
  const floor =
    lastTurn >= 0 && !units.slice(lastTurn).some((unit) => unit.tool) ? lastTurn : units.length - 1;
  // Keep what the target can hold: the suffix grows back past the policy window while the
  // request stays under the target (only the older part is folded).
  while (at.start > 0 && !input.force) {
    const unit = units[at.start - 1]!;
    const userAfter = at.userBefore - (isUser(at.start - 1) ? unit.tokens : 0);
    if (fixed + overhead + reserve + Math.min(userBudget, userAfter) + at.suffix + unit.tokens > run.target)
      break;
    at.start--;
    at.suffix += unit.tokens;
    at.userBefore = userAfter;
  }
  while (
    at.start < floor &&
    (at.start < lastTurn ? over(plan, at, run.target) : over(plan, at, run.budget))
  ) {
    at.suffix -= units[at.start]!.tokens;
    if (isUser(at.start)) at.userBefore += units[at.start]!.tokens;
    at.start++;
  }
}

/** The summary's room and the plan, the suffix and the kept user text (`picked`) chosen. */
function finalPlan(plan: PlanContext, at: SuffixState, picked: readonly number[]): SummaryPlan {
  const { run, input, units, unpinned, fixed, overhead, reserve, previousBody } = plan;
  const { policy } = input;
  const { start, suffix } = at;
  const keptTokens = picked.reduce((sum, u) => sum + units[u]!.tokens, 0);
  const targetRoom = run.target - fixed - overhead - suffix - keptTokens;
  const budgetRoom = run.budget - fixed - overhead - suffix - keptTokens;
  // The summary may use the room left under the target, or half the room under the budget,
  // or its reserve while the budget holds it, whichever is more: a summary squeezed to nothing
  // loses what later steps ask about, and what a squeezed round drops never comes back (the
  // rolling eval: agent ids kept at 1/8 rose from 52.5% to 65% with the reserve).
  // When even the shortest suffix leaves no room (an oversized latest message), the summary
  // still gets its reserve: level d then cuts the oversized message, which the archive keeps.
  // (Not when that message is the user's own latest input: it is never cut for the summary.)
  // Squeezed, level d cuts the latest turn for the summary's room: for its share of the target
  // and its previous size up to half the target, no more (a 3.6k-token log is not cut to 288
  // characters to keep a summary larger than the target).
  const squeezed = over(plan, at, run.budget) && !units[units.length - 1]!.startsTurn;
  const room = squeezed
    ? summaryReserve(policy, run.target, previousBody, SQUEEZED_KEEP_CAP)
    : Math.max(targetRoom, Math.floor(budgetRoom / 2), Math.min(reserve, budgetRoom));
  // The view fills its target (issue 35): verbatim turns first, then summary lines. When the
  // suffix leaves more room under the target than maxSummaryTokens (a large turn before it was
  // folded), the built-in summarizer fills that room instead of leaving it empty (requests at
  // 30-60% of the target in the retention eval's 8k sessions).
  // Not when forced: a manual compaction of a request that fits has nothing to fill (the
  // summary would only grow the request). Otherwise the request was over the target.
  const fill = squeezed || input.force ? 0 : targetRoom;
  const maxTokens = Math.max(16, Math.min(policy.maxSummaryTokens, room));
  const fillTokens = Math.max(maxTokens, Math.min(fill, room));
  return {
    foldBefore: unpinned.at(units[start]!.start)!,
    keep: new Set(picked.map((u) => unpinned.at(units[u]!.start)!)),
    maxTokens,
    fillTokens,
  };
}

/**
 * The entries the summary folds and the ones kept (pinned, the suffix, the user's words the plan
 * keeps), with the folded ones' counts known from the view (the summary event's input size).
 * In slices: over 16k entries, this split and the map took one block with the plan's end.
 */
export async function splitFolded(
  entries: readonly ViewEntry[],
  plan: { foldBefore: number; keep: ReadonlySet<number> } | undefined,
  slice: TimeSlice,
): Promise<{
  folded: ViewEntry[];
  kept: ViewEntry[];
  known: ShardedMap<number>;
  foldedItems: IndexedMessage[];
  foldedTokens: number;
}> {
  const foldBefore = plan?.foldBefore ?? 0;
  // Chunked, then each made one array at its size with a turn between (three arrays of 300k
  // grown by copies in step held the loop 50 ms at one entry: issue 47).
  const folded = new ChunkedList<ViewEntry>();
  const kept = new ChunkedList<ViewEntry>();
  // Sharded: a `Map` of 300k folded ids grew in one `set` that held the loop ~18 ms.
  const known = new ShardedMap<number>();
  // The result's folded messages and their tokens, in the same walk (over 300k entries, a
  // `map` and a `reduce` after the summary were one more stretch of the loop).
  const foldedItems = new ChunkedList<IndexedMessage>();
  let foldedTokens = 0;
  for (let k = 0; k < entries.length; k++) {
    const entry = entries[k]!;
    if (entry.pinned || k >= foldBefore) kept.push(entry);
    else if (plan?.keep.has(k)) kept.push(Object.assign({}, entry, { userText: true }));
    else {
      folded.push(entry);
      foldedItems.push(entry.item);
      foldedTokens += entry.tokens;
      known.set(entry.item.id, entry.tokens);
    }
    if ((k & 511) === 511 && slice.due()) await slice.pause();
  }
  const arrays: ViewEntry[][] = [];
  for (const list of [folded, kept]) {
    if (slice.due()) await slice.pause();
    arrays.push(list.toArray());
  }
  if (slice.due()) await slice.pause();
  return { folded: arrays[0]!, kept: arrays[1]!, known, foldedItems: foldedItems.toArray(), foldedTokens };
}
