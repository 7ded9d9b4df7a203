/**
 * Steps 2-4 of a preflight after indexing: resume the session's view (extended for appended
 * messages, rebuilt otherwise, in slices), count the request
 * and decide. The first call of a long history nobody counted decides from a bound when it
 * can (bound-first-call.ts).
 */
import type { TokenCounter } from '../../counting/token-counter.js';
import { type CalibratedCount, countsExactly } from '../../counting/usage-calibration.js';
import type { TokenBreakdown } from '../../events/events.js';
import type { SessionState } from '../../session/session-store.js';
import { runStepsYielding, TimeSlice } from '../../time-slice.js';
import { paceOf } from '../call-pace.js';
import { type Decision, decide, hardLimitOf } from '../decide.js';
import { BOUND_FROM, boundCounterOf, finishExact, shareKnownCounts } from '../index/bound-first-call.js';
import { countAhead } from '../index/count-ahead.js';
import { repairedKey, SLICED_FROM } from '../index/index-messages.js';
import type { IndexedHistory } from '../index/index-request.js';
import { fixedTokens, type PipelineDeps, type PreflightInput, summaryText } from '../preflight-deps.js';
import { summaryMessageTokens } from '../run-cascade.js';
import { emitDivergence } from './match-state.js';
import { adoptState, buildViewSteps, extendView, type ViewContext, viewIsReusable } from './resume-view.js';
import type { SessionView } from './session-view.js';

/** Step 2's context: what building or extending the view needs. */
function viewContextOf(
  deps: PipelineDeps,
  input: PreflightInput,
  indexed: IndexedHistory,
  state: SessionState | undefined,
  fresh: { count: number },
  counter: TokenCounter = deps.counter,
): ViewContext {
  const rewriting = {
    codec: input.codec,
    counter: deps.counter,
    pairer: indexed.pairer,
    items: indexed.items,
    archived: deps.archive.keepsArtifacts,
  };
  return {
    fresh,
    trust: (item) => deps.marks.verifyOnce(input.key, item.entry, item.entry.parsed.text),
    history: indexed,
    state,
    rule: input.policy,
    codec: input.codec,
    counter,
    realize: (item, rewrite) => deps.rewrites.get(rewriting, item, rewrite),
  };
}

/** The view of the last call extended with the new messages, when it can be. */
function extendedView(indexed: IndexedHistory, viewContext: ViewContext): SessionView | undefined {
  const cached = indexed.view;
  if (viewIsReusable(cached, viewContext, indexed.changedFrom) && extendView(cached, viewContext)) {
    adoptState(cached, viewContext.state);
    return cached;
  }
  return undefined;
}

/** A view built anew, kept for the next call (its divergence reported). */
function keepView(deps: PipelineDeps, input: PreflightInput, indexed: IndexedHistory, view: SessionView) {
  indexed.view = view;
  if (view.divergence) emitDivergence(deps.bus, input.context, indexed, view.divergence);
  return view;
}

/** Step 3: count the request (system, tools, overhead, view, summary message). */
export function countRequest(deps: PipelineDeps, input: PreflightInput, view: SessionView) {
  const fixed = fixedTokens(deps, input.options);
  let summaryWire: unknown;
  let summaryTokens = 0;
  if (view.summaryItem && view.summarySigned !== undefined) {
    // The summary of a message that holds other text too: sent alone, as the manager's.
    summaryWire = input.codec.summaryMessage(view.summarySigned);
    summaryTokens = summaryMessageTokens(input.codec, deps.counter, view.summarySigned);
  } else if (view.summaryItem) {
    summaryWire = view.summaryItem.entry.wire;
    summaryTokens = view.summaryItem.entry.tokens?.get(deps.counter) ?? 0;
    if (summaryTokens === 0)
      summaryTokens = summaryMessageTokens(input.codec, deps.counter, view.summaryItem.entry.parsed.text);
  } else if (view.previousSummary !== undefined && view.version > 0) {
    const text = summaryText(deps, input.key, view.version, view.previousSummary, view.matched?.local);
    view.summaryMessage ??= {
      wire: input.codec.summaryMessage(text),
      tokens: summaryMessageTokens(input.codec, deps.counter, text),
    };
    summaryWire = view.summaryMessage.wire;
    summaryTokens = view.summaryMessage.tokens;
  }
  const breakdown: TokenBreakdown = {
    system: fixed.system + view.sums.system,
    developer: view.sums.developer,
    toolsSchema: fixed.toolsSchema,
    messages: deps.counter.requestOverhead + view.sums.messages + summaryTokens,
  };
  const tokensBefore = breakdown.system + breakdown.developer + breakdown.toolsSchema + breakdown.messages;
  return { summaryWire, summaryTokens, breakdown, tokensBefore };
}

/** What the steps after indexing read of a call that brought many new messages. */
export interface ColdCall {
  readonly slice: TimeSlice;
  /** Counts stored with the session's state, by content hash. */
  readonly known: ReadonlyMap<string, number> | undefined;
}

/** Steps 2-4 done: the view, its count and the decision. */
export interface Resumed {
  readonly view: SessionView;
  readonly counted: ReturnType<typeof countRequest>;
  readonly calibrated: CalibratedCount;
  readonly decision: Decision;
  /** Decided from the bound (bound-first-call.ts): exact counting is left for after the call. */
  readonly bounded: boolean;
  /** Messages tokenized by this call (the rest came from the cache). */
  readonly fresh: number;
}

/** Steps 3-4 on a view: its count, calibrated, and the decision. */
function countAndDecide(
  deps: PipelineDeps,
  input: PreflightInput,
  view: SessionView,
  idle: boolean,
  bounded: boolean,
  fresh = 0,
): Resumed {
  const counted = countRequest(deps, input, view);
  const calibrated = deps.calibration.count(
    input.key,
    counted.tokensBefore,
    countsExactly(deps.counter, input.codec.format),
  );
  const decision = decide(calibrated.tokens, input.policy, input.maxContextTokens, {
    force: input.options.force === true,
    coldCache: idle,
    hardLimit: hardLimitOf(input.options),
    pace: paceOf(view, input.policy),
    price: deps.cachePrice,
  });
  // One literal with every field: `{ ...resumed, fresh }` built a new hidden class per call.
  return { view, counted, calibrated, decision, bounded, fresh };
}

/**
 * A first call of a long history decided from the bound of its uncounted messages, when the
 * bound is under the trigger (then so is the exact count); `undefined` when it may be over or
 * the counter has no bound. The exact counts and view are finished after the call.
 */
async function resumeBounded(
  deps: PipelineDeps,
  input: PreflightInput,
  indexed: IndexedHistory,
  stored: SessionState | undefined,
  cold: ColdCall,
  idle: boolean,
): Promise<Resumed | undefined> {
  const bound = input.messages.length >= BOUND_FROM ? boundCounterOf(deps.counter) : undefined;
  if (!bound) return undefined;
  // A known session (its counts stored) brings few uncounted messages: counted exactly.
  if ((await shareKnownCounts(indexed.items, deps.counter, bound, cold.known, cold.slice)) <= SLICED_FROM)
    return undefined;
  const context = viewContextOf(deps, input, indexed, stored, { count: 0 }, bound);
  const view = await runStepsYielding(buildViewSteps(context), cold.slice);
  const resumed = countAndDecide(deps, input, view, idle, true);
  if (resumed.decision.triggered) return undefined;
  keepView(deps, input, indexed, view);
  const exact = viewContextOf(deps, input, indexed, stored, { count: 0 });
  const generation = indexed.generation;
  deps.counts.finishAfter(input.key, async () => {
    const current = () => deps.histories.heldLength(input.key) === indexed.length;
    if (
      !(await finishExact({
        history: indexed,
        boundView: view,
        context: exact,
        stored,
        known: cold.known,
        current,
      })) ||
      indexed.generation !== generation
    )
      return;
    deps.counts.schedule(input.key, indexed);
    // The quick record of the exact view (quick-resume.ts), under the state as it is now.
    const state = await deps.store.get(input.key);
    const plain =
      input.messages.length === indexed.length && deps.histories.heldLength(repairedKey(input.key)) === 0;
    if (indexed.view && indexed.generation === generation && plain)
      deps.counts.quick.note(input, deps.counts.scope(input.codec.format), indexed.view, state, generation);
  });
  return resumed;
}

/**
 * Steps 2-4: resume the view (extended when possible, rebuilt otherwise, in slices), count,
 * decide. A warm call whose view extends (no slice) answers at once, without a promise: back to
 * back, each await was a hop of the microtask queue on every call.
 */
export function resumeAndCount(
  deps: PipelineDeps,
  input: PreflightInput,
  indexed: IndexedHistory,
  stored: SessionState | undefined,
  cold: ColdCall | TimeSlice | undefined,
  idle: boolean,
): Resumed | Promise<Resumed> {
  if (cold !== undefined) return resumeInSlices(deps, input, indexed, stored, cold, idle);
  const fresh = { count: 0 };
  const viewContext = viewContextOf(deps, input, indexed, stored, fresh);
  const view = extendedView(indexed, viewContext);
  if (view === undefined) return rebuiltView(deps, input, indexed, viewContext, idle, fresh);
  deps.counts.schedule(input.key, indexed);
  return countAndDecide(deps, input, view, idle, false, fresh.count);
}

/** {@link resumeAndCount} of a warm call whose view cannot be extended: rebuilt in slices. */
async function rebuiltView(
  deps: PipelineDeps,
  input: PreflightInput,
  indexed: IndexedHistory,
  viewContext: ViewContext,
  idle: boolean,
  fresh: { count: number },
): Promise<Resumed> {
  const built = await runStepsYielding(buildViewSteps(viewContext), new TimeSlice());
  const view = keepView(deps, input, indexed, built);
  deps.counts.schedule(input.key, indexed);
  return countAndDecide(deps, input, view, idle, false, fresh.count);
}

/** {@link resumeAndCount} of a call that brought many new messages, or long ones (in slices). */
async function resumeInSlices(
  deps: PipelineDeps,
  input: PreflightInput,
  indexed: IndexedHistory,
  stored: SessionState | undefined,
  cold: ColdCall | TimeSlice,
  idle: boolean,
): Promise<Resumed> {
  // A slice alone: a warm call whose new messages are long, counted ahead in slices.
  const first = cold instanceof TimeSlice ? undefined : cold;
  const bounded = first && (await resumeBounded(deps, input, indexed, stored, first, idle));
  if (bounded) return bounded;
  const fresh = { count: 0 };
  const viewContext = viewContextOf(deps, input, indexed, stored, fresh);
  const slice = cold instanceof TimeSlice ? cold : cold.slice;
  await countAhead({ ...viewContext, stored, known: first?.known }, slice);
  // A rebuild (a first call, or a warm one after a compaction changed the state: background
  // mode's swap) counts the messages the view has not counted yet: in slices either way.
  const view =
    extendedView(indexed, viewContext) ??
    keepView(deps, input, indexed, await runStepsYielding(buildViewSteps(viewContext), slice));
  deps.counts.schedule(input.key, indexed);
  return countAndDecide(deps, input, view, idle, false, fresh.count);
}
