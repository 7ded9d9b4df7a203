/**
 * Part of step 7: the state a compaction leaves, and what binds it to the history it was made
 * from. Its anchor is the prefix chain of the history up to the last message it covers (the
 * previous summary message of a persisted view included), so a later history resumes it only
 * when that prefix is unchanged; its branches are the states stored before it (ancestors and
 * other branches), newest first, bounded in number and size, so a rewind or a fork resumes
 * what still holds.
 */

import { ChunkedList } from '../../chunked-list.js';
import {
  type HistoryAnchor,
  MAX_BRANCH_BYTES,
  MAX_BRANCHES,
  type SessionRewrite,
  type SessionState,
} from '../../session/session-state.js';
import { runSteps, type Steps } from '../../time-slice.js';
import type { PreparedRequest } from '../prepare-request.js';
import type { CascadeResult } from '../run-cascade.js';
import { pinIsItsOwn } from '../view/resume-view.js';

/** The anchor of a state made by `cascade` from `prepared`'s history. */
function* anchorOf(prepared: PreparedRequest, cascade: CascadeResult): Steps<HistoryAnchor> {
  const { view, indexed } = prepared;
  const base = view.matched;
  let length = 0;
  if (view.summaryItem) length = view.summaryItem.index + 1;
  else if (base?.anchor) length = base.anchor.length;
  else if (base && base.coveredIds.length > 0) {
    // A state written before anchors: up to the last message it covers in this history.
    const covered = new Set(base.coveredIds);
    yield;
    for (let k = 0; k < indexed.items.length; k++) {
      const item = indexed.items.at(k)!;
      if (covered.has(item.id)) length = item.index + 1;
      if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    }
  }
  for (let k = 0; k < cascade.folded.length; k++) {
    length = Math.max(length, cascade.folded[k]!.index + 1);
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
  }
  return { length, chain: length === 0 ? '' : indexed.chainAt(length - 1) };
}

/** A state as kept among the branches (no branches of its own). */
function asBranch(state: SessionState): SessionState {
  if (state.branches === undefined) return state;
  const { branches: _branches, ...rest } = state;
  return rest;
}

/** `state` with its anchor and the earlier states as branches (bounded). */
function* withLineage(
  state: SessionState,
  prepared: PreparedRequest,
  cascade: CascadeResult,
): Steps<SessionState> {
  state.anchor = yield* anchorOf(prepared, cascade);
  const record = prepared.state;
  if (!record) return state;
  const earlier = [record, ...(record.branches ?? [])].map(asBranch);
  const branches: SessionState[] = [];
  let bytes = 0;
  for (const branch of earlier) {
    if (branches.length >= MAX_BRANCHES) break;
    // Only states that can be resumed for something (a summary or coverage).
    if (branch.summary === undefined && branch.coveredIds.length === 0) continue;
    // One earlier state at a time (each O(its ids)).
    yield;
    bytes += JSON.stringify(branch).length;
    if (bytes > MAX_BRANCH_BYTES) break;
    branches.push(branch);
  }
  if (branches.length > 0) state.branches = branches;
  return state;
}

/** Entries looked at between two chances to pause in {@link nextStateSteps}. */
const STEP_ENTRIES = 1_024;

/** The state after the cascade (see {@link withLineage} for its anchor and branches). */
export function nextState(prepared: PreparedRequest, cascade: CascadeResult): SessionState {
  return runSteps(nextStateSteps(prepared, cascade));
}

/**
 * The state's record of an entry's rewrite, with the hash of its message, frozen. The entry
 * (this run's, left in the view) then holds the state's object: one object per rewritten
 * message, not two (the levels that rewrite the most, clearing and shortening, make theirs
 * with the hash already: `withHash`). Frozen, a memory store keeps the object itself rather
 * than a copy (session/json-copy.ts); nothing writes to a rewrite once made. `Object.assign`,
 * not a spread (one hidden class per rewrite, see cascade-types.ts).
 */
function stateRewrite(entry: {
  item: { entry: { hash: string } };
  rewrite?: SessionRewrite;
}): SessionRewrite {
  const rewrite = entry.rewrite!;
  const hash = entry.item.entry.hash;
  if (rewrite.hash === hash) return Object.isFrozen(rewrite) ? rewrite : Object.freeze(rewrite);
  const own = Object.freeze(Object.assign({}, rewrite, { hash }));
  entry.rewrite = own;
  return own;
}

/**
 * {@link nextState} as steps that yield every {@link STEP_ENTRIES} entries, so that a long
 * view's state is built in slices (`runStepsYielding`).
 */
export function* nextStateSteps(prepared: PreparedRequest, cascade: CascadeResult): Steps<SessionState> {
  const { view } = prepared;
  const base = view.matched;
  const kept = cascade.entries;
  const rewrites: Record<string, SessionRewrite> = {};
  let rewritten = 0;
  const pinnedIds = new Set([...(base?.pinnedIds ?? []), ...(prepared.state?.pinnedIds ?? [])]);
  const keptIds: string[] = [];
  const userTextIds: string[] = [];
  for (let k = 0; k < kept.length; k++) {
    const entry = kept[k]!;
    if (entry.pinned) {
      // What precedes a provider compaction boundary is pinned by position, not remembered.
      // Reasoning pinned only by the pinned message after it is pinned again from that one.
      if (!entry.beforeBoundary && pinIsItsOwn(entry.item, view.rule, pinnedIds))
        pinnedIds.add(entry.item.id);
    } else {
      if (entry.rewrite) {
        rewrites[entry.item.id] = stateRewrite(entry);
        rewritten++;
      }
      keptIds.push(entry.item.id);
      if (entry.userText) userTextIds.push(entry.item.id);
    }
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
  }
  const summary = cascade.summary;
  const record = prepared.state;
  const coveredBefore = view.summaryItem
    ? view.summarySigned === undefined
      ? [view.summaryItem.id]
      : []
    : (base?.coveredIds ?? []);
  yield;
  // The folded ids in chunks, joined to the ones before in one array at the end (300k pushed
  // onto one array grew it by copies: issue 47).
  const folded = new ChunkedList<string>();
  for (let k = 0; k < cascade.folded.length; k++) {
    folded.push(cascade.folded[k]!.id);
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
  }
  yield;
  const coveredIds = folded.toArray(coveredBefore);
  const state: SessionState = {
    sessionId: prepared.key,
    // Versions only grow: a compaction on another branch (or a history that resumed nothing)
    // takes the next version even when it writes no new summary.
    version: summary?.version ?? (record === undefined || base === record ? view.version : view.nextVersion),
    // A persisted view's summary message is represented by this state's summary: covered.
    // (A message that held the summary and other text is content: covered only when folded.)
    coveredIds,
    keptIds,
    // The cost trigger and the trigger's distance from the trough measure from here.
    pace: { trough: Math.ceil(cascade.tokensAfter * prepared.scale) },
    updatedAt: Date.now(),
  };
  if (pinnedIds.size > 0) state.pinnedIds = [...pinnedIds];
  if (userTextIds.length > 0) state.userTextIds = userTextIds;
  if (rewritten > 0) state.rewrites = rewrites;
  if (summary) {
    state.summary = {
      text: summary.body,
      tokens: summary.tokens,
      summarizer: summary.summarizer,
      createdAt: Date.now(),
    };
  } else if (view.previousSummary !== undefined) {
    state.summary = base?.summary ?? {
      text: view.previousSummary,
      tokens: prepared.summaryTokens,
      summarizer: 'unknown',
      createdAt: Date.now(),
    };
  }
  return yield* withLineage(state, prepared, cascade);
}
