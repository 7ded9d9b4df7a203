/**
 * Step 2: resume the session's view. What the model sees is the pinned messages, the
 * rolling summary and every message the summary does not cover, with the rewrites earlier
 * compactions made (cleared tool results, shortened arguments, cut messages) applied the
 * same way every time, so provider prompt caches keep hitting. The view is kept between
 * calls and extended for appended messages; it is rebuilt when the stored state, the
 * policy or earlier messages change.
 */

import type { TokenCounter } from '../counting/token-counter.js';
import type { MessageCodec } from '../messages/formats/message-codec.js';
import { newestBoundary } from '../messages/formats/provider-compaction.js';
import { summaryBody } from '../messages/message.js';
import { entryTokens, type IndexedMessage } from '../messages/message-index.js';
import { isPinned, type PinRule } from '../messages/partition.js';
import type { SessionRewrite, SessionState } from '../session/session-store.js';
import type { IndexedHistory } from './index-request.js';
import type { RealizedRewrite, SessionView, ViewEntry } from './session-view.js';

/** What building a view needs. */
export interface ViewContext {
  readonly history: IndexedHistory;
  readonly state: SessionState | undefined;
  readonly rule: PinRule;
  readonly codec: MessageCodec;
  readonly counter: TokenCounter;
  /** The wire and tokens of a rewrite of `item` (cached by the caller). */
  readonly realize: (item: IndexedMessage, rewrite: SessionRewrite) => RealizedRewrite;
  /** Counts messages tokenized by this call (not found in the cache). */
  readonly fresh: { count: number };
}

const EMPTY = new Set<string>();

/**
 * The summary message of a persisted view, if the history carries one this session can trust:
 * only the message that is exactly the summary the session's stored state holds (its version
 * and text). Anything else that looks like a summary, from any role, is ordinary content (a
 * user message starting with `<COMPACT-SUMMARY v9>` is not adopted: its claims are not merged,
 * the version does not jump, nothing is pinned by it). Without stored state (a restart with a
 * memory store) a persisted summary is therefore content too; use a shared store to resume.
 */
function acceptedSummary(
  items: readonly IndexedMessage[],
  state: SessionState | undefined,
): IndexedMessage | undefined {
  if (!state?.summary) return undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.entry.summaryVersion === undefined) continue;
    if (
      item.entry.summaryVersion === state.version &&
      summaryBody(item.entry.parsed.text) === state.summary.text
    )
      return item;
    // A newer-looking tag than the stored summary is not ours: keep looking for the real one.
    if (item.entry.summaryVersion > state.version) continue;
    return undefined;
  }
  return undefined;
}

/**
 * An older summary of this session still in the caller's history (an SDK session that keeps
 * its own items, e.g. v2 while the store holds v3): the stored summary supersedes it, so it
 * is dropped rather than sent beside the new one.
 */
function isStaleSummary(item: IndexedMessage, state: SessionState | undefined): boolean {
  const version = item.entry.summaryVersion;
  return version !== undefined && state?.summary !== undefined && version < state.version;
}

function addTokens(sums: SessionView['sums'], role: string, tokens: number): void {
  if (role === 'system') sums.system += tokens;
  else if (role === 'developer') sums.developer += tokens;
  else sums.messages += tokens;
}

function makeEntry(context: ViewContext, item: IndexedMessage, pinned: boolean, round: number): ViewEntry {
  if (item.entry.tokens?.get(context.counter) === undefined) context.fresh.count++;
  const originalTokens = entryTokens(item, context.counter);
  const rewrite = context.state?.rewrites?.[item.id];
  if (rewrite && !pinned) {
    const realized = context.realize(item, rewrite);
    return { item, pinned, round, wire: realized.wire, tokens: realized.tokens, originalTokens, rewrite };
  }
  return { item, pinned, round, wire: item.entry.wire, tokens: originalTokens, originalTokens };
}

/**
 * An entry before the newest provider compaction boundary: the provider drops it, so it goes
 * out as the caller wrote it (no rewrite), pinned, and counts 0 tokens.
 */
function beforeBoundaryEntry(item: IndexedMessage, round: number): ViewEntry {
  return {
    item,
    pinned: true,
    round,
    wire: item.entry.wire,
    tokens: 0,
    originalTokens: 0,
    beforeBoundary: true,
  };
}

/**
 * True when the session's summary was made before the newest provider compaction boundary at
 * `boundary` (so the provider's compaction already holds it): the boundary was not in the
 * view of the compaction that wrote the state (every pinned message of it is in
 * `pinnedIds`), no message after it is covered, and a summary message in the history sits
 * before it.
 */
function summaryPredatesBoundary(
  items: readonly IndexedMessage[],
  boundary: number,
  state: SessionState | undefined,
  summaryItem: IndexedMessage | undefined,
): boolean {
  if (boundary < 0 || state === undefined) return false;
  if (summaryItem) return summaryItem.index < boundary;
  if (state.pinnedIds?.includes(items[boundary]!.id)) return false;
  if (state.coveredIds.length === 0) return true;
  const covered = new Set(state.coveredIds);
  for (let i = boundary + 1; i < items.length; i++) if (covered.has(items[i]!.id)) return false;
  return true;
}

/** Builds the view from scratch. */
export function buildView(context: ViewContext): SessionView {
  const { history, state, rule } = context;
  const items = history.items;
  const boundary = newestBoundary(items);
  const accepted = acceptedSummary(items, state);
  // A summary made before the provider compacted is part of what the provider dropped.
  const stale = summaryPredatesBoundary(items, boundary, state, accepted);
  const summaryItem = stale ? undefined : accepted;
  const covered = !accepted && state?.coveredIds.length ? new Set(state.coveredIds) : EMPTY;
  const kept = state?.keptIds?.length ? new Set(state.keptIds) : EMPTY;
  // A raw history that shares no message with what the stored summary covers or kept is
  // another conversation under the same session id: it must not receive this summary.
  const mismatch =
    !accepted &&
    state !== undefined &&
    (covered.size > 0 || kept.size > 0) &&
    !items.some((item) => covered.has(item.id) || kept.has(item.id));
  const effective = mismatch ? undefined : state;
  const pinnedIds = effective?.pinnedIds?.length ? new Set(effective.pinnedIds) : EMPTY;
  const userTextIds = effective?.userTextIds?.length ? new Set(effective.userTextIds) : EMPTY;
  const coveredIds = mismatch ? EMPTY : covered;
  const round = history.pairer.round;
  const visible: IndexedMessage[] = [];
  const pinnedFlags: boolean[] = [];
  const pinnedRounds = new Set<number>();
  for (const item of items) {
    // Before the boundary everything is sent as is (summaries and covered messages included).
    const dropped = item.index < boundary;
    if (!dropped && (item === summaryItem || coveredIds.has(item.id) || isStaleSummary(item, effective)))
      continue;
    const pinned = dropped || isPinned(item.entry, rule) || pinnedIds.has(item.id);
    visible.push(item);
    pinnedFlags.push(pinned);
    const r = round[item.index] ?? -1;
    if (pinned && r >= 0 && pinsItsRound(item)) pinnedRounds.add(r);
    // Reasoning right before a pinned message stays with it.
    for (let k = visible.length - 2; pinned && k >= 0 && isReasoningOf(visible[k]!, r, round); k--)
      pinnedFlags[k] = true;
  }
  const sums = { system: 0, developer: 0, messages: 0 };
  const entries = visible.map((item, k) => {
    const r = round[item.index] ?? -1;
    if (item.index < boundary) return beforeBoundaryEntry(item, r);
    const entry = makeEntry(
      { ...context, state: effective },
      item,
      pinnedFlags[k]! || pinnedRounds.has(r),
      r,
    );
    addTokens(sums, item.entry.parsed.role, entry.tokens);
    if (!entry.pinned && userTextIds.has(item.id)) entry.userText = true;
    return entry;
  });
  const version = Math.max(effective?.version ?? 0, accepted?.entry.summaryVersion ?? 0);
  return {
    state,
    rule,
    generation: history.generation,
    counter: context.counter,
    format: context.codec.format,
    processed: items.length,
    summaryItem,
    version,
    previousSummary: stale
      ? undefined
      : summaryItem
        ? summaryBody(summaryItem.entry.parsed.text)
        : effective?.summary?.text,
    mismatch,
    entries,
    pinnedRounds,
    pinnedIds,
    coveredIds,
    sums,
  };
}

/**
 * A pinned message with tool activity or reasoning pins its whole round (calls, results and
 * the reasoning before them stay together); pinned plain text pins only itself.
 */
function pinsItsRound(item: IndexedMessage): boolean {
  const parsed = item.entry.parsed;
  return parsed.kind === 'reasoning' || parsed.toolCalls.length > 0 || parsed.toolResults.length > 0;
}

/** True when `item` (or entry) is a reasoning item of round `r`. */
function isReasoningOf(target: IndexedMessage | ViewEntry, r: number, round: ArrayLike<number>): boolean {
  const item = 'item' in target ? target.item : target;
  return r >= 0 && item.entry.parsed.kind === 'reasoning' && (round[item.index] ?? -1) === r;
}

/**
 * Extends `view` with the messages appended since it was built. Returns false when it
 * cannot (a new message pins a round that has unpinned members, or carries a summary tag):
 * the caller then rebuilds.
 */
export function extendView(view: SessionView, context: ViewContext): boolean {
  const items = context.history.items;
  const round = context.history.pairer.round;
  const added: ViewEntry[] = [];
  for (let i = view.processed; i < items.length; i++) {
    const item = items[i]!;
    if (item.entry.summaryVersion !== undefined) return false;
    // A new provider compaction boundary: what was before it is no longer counted.
    if (item.entry.parsed.providerCompaction === 'boundary') return false;
    if (view.coveredIds.has(item.id)) continue;
    const r = round[i] ?? -1;
    const pinned = isPinned(item.entry, view.rule) || view.pinnedIds.has(item.id) || view.pinnedRounds.has(r);
    const before = added.at(-1) ?? view.entries.at(-1);
    if (pinned && before && !before.pinned && isReasoningOf(before, r, round)) return false;
    if (pinned && r >= 0 && !view.pinnedRounds.has(r) && pinsItsRound(item)) {
      // Pinning this round would pin members already in the view unpinned.
      const lastEntry = added.at(-1) ?? view.entries.at(-1);
      if (lastEntry && lastEntry.round === r) return false;
      view.pinnedRounds.add(r);
    }
    added.push(makeEntry({ ...context, state: view.mismatch ? undefined : view.state }, item, pinned, r));
  }
  for (const entry of added) {
    view.entries.push(entry);
    addTokens(view.sums, entry.item.entry.parsed.role, entry.tokens);
  }
  view.processed = items.length;
  return true;
}

/** True when `view` can be extended for this call (same state, policy, counter and unchanged prefix). */
export function viewIsReusable(
  view: SessionView | undefined,
  context: ViewContext,
  changedFrom: number,
): view is SessionView {
  return (
    view !== undefined &&
    view.state === context.state &&
    view.rule === context.rule &&
    view.counter === context.counter &&
    view.format === context.codec.format &&
    view.generation === context.history.generation &&
    changedFrom >= view.processed
  );
}
