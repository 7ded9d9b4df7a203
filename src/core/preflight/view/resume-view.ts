/**
 * Step 2: resume the session's view. What the model sees is the pinned messages, the
 * rolling summary and every message the summary does not cover, with the rewrites earlier
 * compactions made (cleared tool results, shortened arguments, cut messages) applied the
 * same way every time, so provider prompt caches keep hitting. The view is kept between
 * calls and extended for appended messages; it is rebuilt when the stored state, the
 * policy or earlier messages change.
 */

import { ChunkedList, type Positional } from '../../chunked-list.js';
import type { TokenCounter } from '../../counting/token-counter.js';
import type { MessageCodec } from '../../messages/formats/message-codec.js';
import { newestBoundarySteps } from '../../messages/formats/provider-compaction.js';
import { summaryBody } from '../../messages/message.js';
import { entryTokens, type IndexedMessage } from '../../messages/message-index.js';
import { isPinned, type PinRule } from '../../messages/partition.js';
import type { SessionRewrite, SessionState } from '../../session/session-store.js';
import { shardedSetSteps } from '../../sharded-map.js';
import { runSteps, type Steps } from '../../time-slice.js';
import type { IndexedHistory } from '../index/index-request.js';
import { type ContentAroundSummary, contentAroundSummary } from './content-around-summary.js';
import { matchStateSteps, type TrustSummary } from './match-state.js';
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
  /** A summary message's version and body when its mark verifies for this session. */
  readonly trust: TrustSummary;
}

const EMPTY = new Set<string>();

export function addTokens(sums: SessionView['sums'], role: string, tokens: number): void {
  if (role === 'system') sums.system += tokens;
  else if (role === 'developer') sums.developer += tokens;
  else sums.messages += tokens;
}

/** The stored rewrite of `item`, if one applies (only to the message it was made for). */
function storedRewrite(state: SessionState | undefined, item: IndexedMessage): SessionRewrite | undefined {
  const rewrite = state?.rewrites?.[item.id];
  // Ids such as `call_0` are reused: a rewrite holds only for the message it was made for.
  return rewrite && (rewrite.hash === undefined || rewrite.hash === item.entry.hash) ? rewrite : undefined;
}

/**
 * The view entry of `item`. The newest message of the history goes as given even when the
 * state rewrote it while it was old (a rewind or a branch switch onto a cleared result): the
 * rewrite applies again once a later message follows it ({@link extendView}).
 */
function makeEntry(
  context: ViewContext,
  item: IndexedMessage,
  pinned: boolean,
  round: number,
  newest: boolean,
): ViewEntry {
  if (item.entry.tokens?.get(context.counter) === undefined) context.fresh.count++;
  const originalTokens = entryTokens(item, context.counter);
  const rewrite = newest ? undefined : storedRewrite(context.state, item);
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
  items: Positional<IndexedMessage>,
  boundary: number,
  state: SessionState | undefined,
  summaryItem: IndexedMessage | undefined,
): boolean {
  if (boundary < 0 || state === undefined) return false;
  if (summaryItem) return summaryItem.index < boundary;
  if (state.pinnedIds?.includes(items.at(boundary)!.id)) return false;
  if (state.coveredIds.length === 0) return true;
  const covered = new Set(state.coveredIds);
  for (let i = boundary + 1; i < items.length; i++) if (covered.has(items.at(i)!.id)) return false;
  return true;
}

/** The entry of a message that also carried the session's summary: its content around it. */
function aroundEntry(
  item: IndexedMessage,
  pinned: boolean,
  round: number,
  around: ContentAroundSummary,
): ViewEntry {
  const { wire, tokens, content } = around;
  return { item, pinned, round, wire, tokens, originalTokens: tokens, content };
}

/** Builds the view from scratch. */
export function buildView(context: ViewContext): SessionView {
  return runSteps(buildViewSteps(context));
}

/** {@link buildView} as {@link Steps}: a pause every few hundred messages (a cold call of a long history). */
export function* buildViewSteps(context: ViewContext): Steps<SessionView> {
  const { history, state, rule } = context;
  const plan = yield* viewPlanSteps(context);
  const { match, effective, stale, summaryItem, signed } = plan;
  const visible = yield* visibleItems(context, plan);
  const { entries, sums } = yield* viewEntries(context, plan, visible);
  return {
    state,
    matched: effective,
    nextVersion: match.nextVersion,
    divergence: match.divergence,
    rule,
    generation: history.generation,
    counter: context.counter,
    format: context.codec.format,
    processed: plan.items.length,
    summaryItem,
    ...(signed === undefined ? {} : { summarySigned: signed }),
    version: effective?.version ?? 0,
    previousSummary: stale
      ? undefined
      : summaryItem
        ? (match.summaryBody ?? summaryBody(summaryItem.entry.parsed.text))
        : effective?.summary?.text,
    mismatch: match.divergence !== undefined,
    entries,
    pinnedRounds: visible.pinnedRounds,
    pinnedIds: plan.pinnedIds,
    coveredIds: plan.coveredIds,
    sums,
  };
}

/** What a view is built from (the matched state, the summary it resumes, the ids it names), in steps. */
function* viewPlanSteps(context: ViewContext) {
  const { history, state } = context;
  const items = history.items;
  const boundary = yield* newestBoundarySteps(items);
  yield;
  const match = yield* matchStateSteps(history, state, context.trust);
  const effective = match.state;
  const accepted = match.summaryItem;
  // A summary made before the provider compacted is part of what the provider dropped.
  const stale = summaryPredatesBoundary(items, boundary, effective, accepted);
  const summaryItem = stale ? undefined : accepted;
  // A summary merged with other text: the summary goes alone, the rest as content (the whole
  // message when the summary cannot be taken out of its wire form).
  const signed = summaryItem ? match.signed : undefined;
  const around =
    summaryItem && signed !== undefined
      ? contentAroundSummary(context.codec, context.counter, summaryItem, signed)
      : undefined;
  const coveredIds =
    !accepted && effective?.coveredIds.length ? yield* shardedSetSteps(effective.coveredIds) : EMPTY;
  // Pins are the session's whatever the branch (protected memory stays protected).
  const pins = [
    ...(effective?.pinnedIds ?? []),
    ...(state && state !== effective ? (state.pinnedIds ?? []) : []),
  ];
  const pinnedIds = pins.length > 0 ? new Set(pins) : EMPTY;
  const userTextIds = effective?.userTextIds?.length ? new Set(effective.userTextIds) : EMPTY;
  // The items and rounds as they are now: the steps pause between them.
  const round = history.pairer.round;
  return {
    items,
    round,
    boundary,
    match,
    effective,
    stale,
    summaryItem,
    signed,
    around,
    coveredIds,
    pinnedIds,
    userTextIds,
  };
}

type ViewPlan = ReturnType<typeof viewPlanSteps> extends Steps<infer T> ? T : never;

/** The messages the view shows, whether each is pinned, and the rounds pinned messages pin. */
function* visibleItems(context: ViewContext, plan: ViewPlan) {
  const { round, boundary, summaryItem, signed, coveredIds, pinnedIds } = plan;
  // Chunked, as the entries below: arrays of 300k pushed in step grew at one message (issue 47).
  const items = new ChunkedList<IndexedMessage>();
  const pinnedFlags = new ChunkedList<boolean>();
  const pinnedRounds = new Set<number>();
  for (const item of plan.items) {
    if (item.index % 256 === 255) yield;
    // Before the boundary everything is sent as is (summaries and covered messages included).
    const dropped = item.index < boundary;
    if (!dropped && ((item === summaryItem && signed === undefined) || coveredIds.has(item.id))) continue;
    const pinned = dropped || isPinned(item.entry, context.rule) || pinnedIds.has(item.id);
    items.push(item);
    pinnedFlags.push(pinned);
    const r = round.at(item.index) ?? -1;
    if (pinned && r >= 0 && pinsItsRound(item)) pinnedRounds.add(r);
    // Reasoning right before a pinned message stays with it.
    for (let k = items.length - 2; pinned && k >= 0 && isReasoningOf(items.at(k)!, r, round); k--)
      pinnedFlags.set(k, true);
  }
  return { items, pinnedFlags, pinnedRounds };
}

/** The view's entries of the visible messages, and their token sums by role group. */
function* viewEntries(
  context: ViewContext,
  plan: ViewPlan,
  visible: ReturnType<typeof visibleItems> extends Steps<infer T> ? T : never,
) {
  const { round, boundary, effective, summaryItem, around, userTextIds } = plan;
  const last = plan.items.length - 1;
  const sums = { system: 0, developer: 0, messages: 0 };
  const entries = new ChunkedList<ViewEntry>();
  let counted = context.fresh.count;
  for (let k = 0; k < visible.items.length; k++) {
    // Every 256 entries, and after each message this build had to tokenize (a few of those
    // held the loop ~20 ms in one step: a warm rebuild after background mode's swap).
    if (k % 256 === 255 || context.fresh.count !== counted) {
      counted = context.fresh.count;
      yield;
    }
    const item = visible.items.at(k)!;
    const r = round.at(item.index) ?? -1;
    if (item.index < boundary) {
      entries.push(beforeBoundaryEntry(item, r));
      continue;
    }
    const pinned = visible.pinnedFlags.at(k)! || visible.pinnedRounds.has(r);
    const entry =
      around && item === summaryItem
        ? aroundEntry(item, pinned, r, around)
        : makeEntry({ ...context, state: effective }, item, pinned, r, item.index === last);
    addTokens(sums, item.entry.parsed.role, entry.tokens);
    if (!entry.pinned && userTextIds.has(item.id)) entry.userText = true;
    entries.push(entry);
  }
  yield;
  return { entries: entries.toArray(), sums };
}

/**
 * A pinned message with tool activity or reasoning pins its whole round (calls, results and
 * the reasoning before them stay together); pinned plain text pins only itself.
 */
export function pinsItsRound(item: IndexedMessage): boolean {
  const parsed = item.entry.parsed;
  return parsed.kind === 'reasoning' || parsed.toolCalls.length > 0 || parsed.toolResults.length > 0;
}

/**
 * True when a pinned message's pin is its own, to remember in the state and to pin its round
 * by: not a reasoning item pinned only because a pinned message of its round follows it. Such
 * an item remembered would pin its whole round on the next rebuild (a reasoning item pins its
 * round), so the view would depend on how it was built (an incremental view pinned the
 * round's other items, a view built anew did not).
 */
export function pinIsItsOwn(item: IndexedMessage, rule: PinRule, pinnedIds: ReadonlySet<string>): boolean {
  return item.entry.parsed.kind !== 'reasoning' || isPinned(item.entry, rule) || pinnedIds.has(item.id);
}

/** True when `item` (or entry) is a reasoning item of round `r`. */
function isReasoningOf(target: IndexedMessage | ViewEntry, r: number, round: Positional<number>): boolean {
  const item = 'item' in target ? target.item : target;
  return r >= 0 && item.entry.parsed.kind === 'reasoning' && (round.at(item.index) ?? -1) === r;
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
  const grew = items.length > view.processed;
  for (let i = view.processed; i < items.length; i++) {
    const item = items.at(i)!;
    if (item.entry.summaryVersion !== undefined) return false;
    // A new provider compaction boundary: what was before it is no longer counted.
    if (item.entry.parsed.providerCompaction === 'boundary') return false;
    if (view.coveredIds.has(item.id)) continue;
    const r = round.at(i) ?? -1;
    const pinned = isPinned(item.entry, view.rule) || view.pinnedIds.has(item.id) || view.pinnedRounds.has(r);
    const before = added.at(-1) ?? view.entries.at(-1);
    if (pinned && before && !before.pinned && isReasoningOf(before, r, round)) return false;
    if (pinned && r >= 0 && !view.pinnedRounds.has(r) && pinsItsRound(item)) {
      // Pinning this round would pin members already in the view unpinned.
      const lastEntry = added.at(-1) ?? view.entries.at(-1);
      if (lastEntry && lastEntry.round === r) return false;
      view.pinnedRounds.add(r);
    }
    added.push(makeEntry({ ...context, state: view.matched }, item, pinned, r, i === items.length - 1));
  }
  if (grew) rewriteFormerNewest(view, context);
  for (const entry of added) {
    view.entries.push(entry);
    addTokens(view.sums, entry.item.entry.parsed.role, entry.tokens);
  }
  view.processed = items.length;
  return true;
}

/**
 * The view's last entry was the newest message, sent as given: now that messages follow it,
 * the state's rewrite of it (if any) applies again, as a rebuilt view would apply it.
 */
function rewriteFormerNewest(view: SessionView, context: ViewContext): void {
  const last = view.entries.at(-1);
  if (!last || last.pinned || last.rewrite || last.beforeBoundary) return;
  const rewrite = storedRewrite(view.matched, last.item);
  if (!rewrite) return;
  const realized = context.realize(last.item, rewrite);
  addTokens(view.sums, last.item.entry.parsed.role, realized.tokens - last.tokens);
  last.wire = realized.wire;
  last.tokens = realized.tokens;
  last.rewrite = rewrite;
  // The assembled request holds the message as it was sent: built again next time.
  delete view.assembled;
}

/**
 * True when `a` and `b` are the same stored state: the same object, or the same write read
 * back (a store may hand out a copy). A state is never changed once written, and a session's
 * versions only grow, so its version and write time name it.
 */
function sameState(a: SessionState | undefined, b: SessionState | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return (
    a.sessionId === b.sessionId &&
    a.version === b.version &&
    a.local === b.local &&
    a.updatedAt === b.updatedAt &&
    a.coveredIds.length === b.coveredIds.length &&
    a.keptIds?.length === b.keptIds?.length &&
    a.anchor?.length === b.anchor?.length
  );
}

/**
 * Makes `view` hold `state`, the same write as its own read back as another object (see
 * {@link sameState}): later steps tell the record from a branch by identity.
 */
export function adoptState(view: SessionView, state: SessionState | undefined): void {
  if (view.state === state) return;
  const mutable = view as { state: SessionState | undefined; matched: SessionState | undefined };
  if (mutable.matched === mutable.state) mutable.matched = state;
  mutable.state = state;
}

/** True when `view` can be extended for this call (same state, policy, counter and unchanged prefix). */
export function viewIsReusable(
  view: SessionView | undefined,
  context: ViewContext,
  changedFrom: number,
): view is SessionView {
  return (
    view !== undefined &&
    sameState(view.state, context.state) &&
    view.rule === context.rule &&
    view.counter === context.counter &&
    view.format === context.codec.format &&
    view.generation === context.history.generation &&
    changedFrom >= view.processed
  );
}
