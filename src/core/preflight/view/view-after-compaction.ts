/**
 * The session's view right after a compaction, made from what the compaction produced, so
 * that the next call extends it instead of rebuilding the view from the whole history (which
 * cost O(history): 65 ms at 66k messages in a 1M window). The view is what `buildView` would
 * build for the new state over this history: the cascade's entries (pinned, user text kept,
 * the verbatim suffix, rewrites applied), the covered ids grown by what was folded, and the
 * summary message and assembled request of the compaction's answer.
 */
import type { TokenCounter } from '../../counting/token-counter.js';
import type { MessageCodec } from '../../messages/formats/message-codec.js';
import type { SessionState } from '../../session/session-store.js';
import { ShardedSet } from '../../sharded-map.js';
import { runSteps, type Steps } from '../../time-slice.js';
import { copyAheadOf } from '../outcome/result-copy.js';
import { assembledCacheSteps } from '../outcome/untriggered-result.js';
import type { PreparedRequest } from '../prepare-request.js';
import type { CascadeResult } from '../run-cascade.js';
import { statesOf } from './match-state.js';
import { pinsAllSeen } from './remember-protected.js';
import { addTokens, pinIsItsOwn, pinsItsRound } from './resume-view.js';
import type { SessionView } from './session-view.js';

/** What the compaction sent besides its entries: the summary message, when there is one. */
export interface CompactionOutput {
  readonly summaryWire: unknown;
  readonly summaryText: string | undefined;
  readonly codec: MessageCodec;
  readonly counter: TokenCounter;
  readonly summaryTokens: (text: string) => number;
}

/**
 * The view of `state` over the history of `prepared`, or undefined when the compaction's
 * history is one the next call would rebuild anyway (a diverged history, a provider
 * compaction boundary, a summary message found in the history).
 */
export function viewAfterCompaction(
  prepared: PreparedRequest,
  cascade: CascadeResult,
  state: SessionState,
  output: CompactionOutput,
): SessionView | undefined {
  return runSteps(viewAfterCompactionSteps(prepared, cascade, state, output));
}

/** Entries looked at between two chances to pause in {@link viewAfterCompactionSteps}. */
const STEP_ENTRIES = 1_024;

/**
 * {@link viewAfterCompaction} as steps that yield every {@link STEP_ENTRIES} entries, so that
 * a long view is built in slices (`runStepsYielding`).
 */
export function* viewAfterCompactionSteps(
  prepared: PreparedRequest,
  cascade: CascadeResult,
  state: SessionState,
  output: CompactionOutput,
): Steps<SessionView | undefined> {
  const { view, indexed } = prepared;
  if (view.mismatch || view.summaryItem !== undefined || indexed.view !== view) return undefined;
  if (cascade.entries.some((entry) => entry.beforeBoundary)) return undefined;
  if (view.coveredIds.size + cascade.folded.length !== state.coveredIds.length) return undefined;
  // The old view is replaced: its covered set grows in place (copying it is the O(history) step).
  // Sharded when new: a `Set` of 300k folded ids grew in one `add` that held the loop ~18 ms.
  const coveredIds =
    view.coveredIds.size > 0 ? (view.coveredIds as Set<string> | ShardedSet) : new ShardedSet();
  for (let k = 0; k < cascade.folded.length; k++) {
    coveredIds.add(cascade.folded[k]!.id);
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
  }
  if (coveredIds.size !== state.coveredIds.length) {
    indexed.view = undefined;
    return undefined;
  }
  const entries = cascade.entries.slice();
  const sums = { system: 0, developer: 0, messages: 0 };
  const pinnedRounds = new Set<number>();
  let everyPinSeen = true;
  const pinnedIds = new Set(state.pinnedIds ?? []);
  yield;
  for (let k = 0; k < entries.length; k++) {
    const entry = entries[k]!;
    addTokens(sums, entry.item.entry.parsed.role, entry.tokens);
    const ownPin = entry.pinned && pinIsItsOwn(entry.item, view.rule, pinnedIds);
    if (ownPin && entry.round >= 0 && pinsItsRound(entry.item)) pinnedRounds.add(entry.round);
    if (ownPin && !pinnedIds.has(entry.item.id)) everyPinSeen = false;
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
  }
  // As match-state.ts counts it: past every version the session's record holds.
  const nextVersion = Math.max(...statesOf(state).map((held) => held.version)) + 1;
  const text = output.summaryText;
  const summaryWire = text !== undefined && state.version > 0 ? output.summaryWire : undefined;
  yield;
  const assembled = yield* assembledCacheSteps(entries, summaryWire, output.codec.format);
  yield;
  const after: SessionView = {
    state,
    matched: state,
    nextVersion,
    divergence: undefined,
    rule: view.rule,
    generation: indexed.generation,
    counter: view.counter,
    format: view.format,
    processed: indexed.items.length,
    summaryItem: undefined,
    version: state.version,
    previousSummary: state.summary?.text,
    mismatch: false,
    entries,
    pinnedRounds,
    pinnedIds,
    coveredIds,
    sums,
    assembled,
  };
  if (text !== undefined && summaryWire !== undefined)
    after.summaryMessage = { wire: summaryWire, tokens: output.summaryTokens(text) };
  copyAheadOf(assembled);
  // The state protects every pinned entry already (next-state.ts).
  if (everyPinSeen) pinsAllSeen(after);
  return after;
}
