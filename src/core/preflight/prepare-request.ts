/**
 * Steps 1 to 4 of a preflight, the part every call runs: index the request (positional
 * pairing, broken input rejected or repaired), resume the session's view, count it, decide.
 * On the warm path (a history that grew by appending, nothing triggered) each step works on
 * what is new since the session's last call only.
 */

import type { CachePrice } from '../counting/session-cost.js';
import type { TokenCounter } from '../counting/token-counter.js';
import type { CalibratedCount, UsageCalibration } from '../counting/usage-calibration.js';
import { invalidConfig } from '../errors.js';
import type { EventBus, OperationContext } from '../events/event-bus.js';
import type { CompactEvent, TokenBreakdown } from '../events/events.js';
import type { CompactOptions } from '../manager/manager-options.js';
import type { MessageCodec } from '../messages/formats/message-codec.js';
import type { MessageIndex } from '../messages/message-index.js';
import type { CompactPolicy } from '../policy.js';
import type { Redactor } from '../redaction/redactor.js';
import type { SessionArchive } from '../session/session-archive.js';
import type { SessionState, SessionStore } from '../session/session-store.js';
import type { Summarizer } from '../summary/summarizer.js';
import type { SummaryMarks } from '../summary/summary-mark.js';
import { runStepsYielding, TimeSlice } from '../time-slice.js';
import type { InputRepair } from './check-pairing.js';
import { countAhead } from './count-ahead.js';
import { type CallPace, type Decision, decide, hardLimitOf, toLocal } from './decide.js';
import { indexMessages, indexMessagesInSlices, manyNewMessages } from './index-messages.js';
import type { IndexedHistories, IndexedHistory } from './index-request.js';
import { emitDivergence } from './match-state.js';
import { emitMediaEstimates, emitMediaEstimatesInSlices } from './media-estimates.js';
import { PERSIST_COUNTS_FROM, type PersistedCounts } from './persist-counts.js';
import type { RewriteCache } from './realize-rewrite.js';
import { rememberProtected } from './remember-protected.js';
import {
  adoptState,
  buildView,
  buildViewSteps,
  extendView,
  type ViewContext,
  viewIsReusable,
} from './resume-view.js';
import { summaryMessageTokens } from './run-cascade.js';
import type { SessionView } from './session-view.js';

/** What the pipeline needs from the manager (built once per manager). */
export interface PipelineDeps {
  /** Per-session calibration from reported usage. */
  readonly calibration: UsageCalibration;
  readonly counter: TokenCounter;
  readonly model: string;
  readonly store: SessionStore;
  readonly bus: EventBus;
  readonly archive: SessionArchive;
  readonly index: MessageIndex;
  readonly histories: IndexedHistories;
  readonly rewrites: RewriteCache;
  /** The configured summarizer, then the embedded fallback. */
  readonly chain: readonly Summarizer[];
  readonly summarizerTimeoutMs: number;
  /** Redacts summarizer input and output (undefined when the user opted out). */
  readonly summarizerRedact: Redactor | undefined;
  readonly toolCounts: WeakMap<readonly unknown[], number>;
  readonly systemCounts: Map<string, number>;
  /** Stop a compaction (nothing pruned, `storage_failed` thrown) when its archive cannot be written. */
  readonly requireArchive?: boolean;
  readonly clock: () => number; // epoch ms, injectable for tests
  /** Each key's last call (an idle gap compacts early) and how many calls it made (the events' `callNumber`). */
  readonly lastCalls: Map<string, { at: number; count: number }>;
  /** Prices a compaction's effect on the prompt cache (its `compact.pruned_messages` event). */
  readonly cachePrice?: CachePrice;
  /** Signs the summaries written and verifies those handed back. */
  readonly marks: SummaryMarks;
  /** Per session, compactions in a row written by a fallback summarizer (see run-preflight.ts). */
  readonly fallbackStreaks: Map<string, number>;
  /** The sessions' token counts kept with their state (read on a first call, written after calls). */
  readonly counts: PersistedCounts;
}

/** The summary message text of `body` at `version` for the session `key`, marked. */
export function summaryText(
  deps: Pick<PipelineDeps, 'marks'>,
  key: string,
  version: number,
  body: string,
): string {
  return deps.marks.format(key, version, body);
}

/** One call's input. */
export interface PreflightInput {
  readonly context: OperationContext;
  /**
   * Where the session's state lives: the session id, or the session id and the agent for an
   * agent with its own compactor (see `CompactManagerOptions.agents`).
   */
  readonly key: string;
  readonly messages: readonly unknown[];
  readonly codec: MessageCodec;
  readonly policy: Readonly<CompactPolicy>;
  readonly options: CompactOptions;
  readonly maxContextTokens: number;
}

/** Steps 1-4 done: everything the cascade or the untriggered answer needs. */
export interface PreparedRequest extends PreflightInput {
  readonly indexed: IndexedHistory;
  readonly repairs: InputRepair[];
  readonly state: SessionState | undefined;
  readonly view: SessionView;
  readonly summaryWire: unknown;
  readonly summaryTokens: number;
  readonly breakdown: TokenBreakdown;
  /** Tokens of the request, calibrated by reported usage when the counter is not exact. */
  readonly tokensBefore: number;
  /** The same, as the local counter counts them (the cascade works in these units). */
  readonly localTokensBefore: number;
  /** `tokensBefore / localTokensBefore` (1 without calibration). */
  readonly scale: number;
  /** The decision in local units, for the cascade. */
  readonly localDecision: Decision;
  /** The calibration behind `tokensBefore`, for the events. */
  readonly calibrated: CalibratedCount;
  readonly decision: Decision;
  readonly started: number;
  /** Messages tokenized by this call (the rest came from the cache). */
  readonly countedFresh: number;
  /** The session's call number (1 for its first call to this manager). */
  readonly callNumber: number;
  /** The decision event's span id, under which the compaction's events nest. */
  readonly decisionSpanId: string | undefined;
  /**
   * The `compact.trigger_decision` event. When triggered it is held (with the events under it)
   * until the compaction ends, so that it can carry what was kept and pruned.
   */
  readonly decisionEvent?: CompactEvent<'compact.trigger_decision'> | undefined;
}

/** System prompt and tool schemas, each counted once per distinct value. */
export function fixedTokens(
  deps: PipelineDeps,
  options: Pick<CompactOptions, 'system' | 'tools'>,
): { system: number; toolsSchema: number } {
  let system = 0;
  if (options.system !== undefined) {
    const text = typeof options.system === 'string' ? options.system : JSON.stringify(options.system);
    const cached = deps.systemCounts.get(text);
    system = cached ?? deps.counter.countText(text) + 4;
    if (cached === undefined) {
      if (deps.systemCounts.size > 256) deps.systemCounts.clear();
      deps.systemCounts.set(text, system);
    }
  }
  let toolsSchema = 0;
  const tools = options.tools;
  if (tools && tools.length > 0) {
    if (!Array.isArray(tools)) throw invalidConfig('tools', 'must be an array of tool schemas');
    const cached = deps.toolCounts.get(tools);
    toolsSchema = cached ?? deps.counter.countTools(tools);
    if (cached === undefined) deps.toolCounts.set(tools, toolsSchema);
  }
  return { system, toolsSchema };
}

/** Forgets what the pipeline keeps about a session. */
export function forgetSession(deps: PipelineDeps, sessionId: string): void {
  deps.histories.delete(sessionId);
  deps.histories.delete(`${sessionId}\u0000repaired`);
  deps.calibration.forget(sessionId);
  deps.lastCalls.delete(sessionId);
  deps.fallbackStreaks.delete(sessionId);
  deps.marks.forget(sessionId);
}

/** Step 2's context: what building or extending the view needs (step 2 is in {@link prepareRequest}). */
function viewContextOf(
  deps: PipelineDeps,
  input: PreflightInput,
  indexed: IndexedHistory,
  state: SessionState | undefined,
  fresh: { count: number },
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
    counter: deps.counter,
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
function countRequest(deps: PipelineDeps, input: PreflightInput, view: SessionView) {
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
    const text = summaryText(deps, input.key, view.version, view.previousSummary);
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

/**
 * Records this call: its number for the session (1 for the first since the manager started or
 * forgot the session), and whether the previous call is older than the cache lifetime.
 */
function recordCall(deps: PipelineDeps, key: string, lifetimeMs: number): { idle: boolean; number: number } {
  const now = deps.clock();
  const last = deps.lastCalls.get(key);
  if (last === undefined) {
    deps.lastCalls.set(key, { at: now, count: 1 });
    return { idle: false, number: 1 };
  }
  const idle = lifetimeMs > 0 && now - last.at > lifetimeMs;
  last.at = now;
  last.count++;
  return { idle, number: last.count };
}

/**
 * The session's pace since the compaction its view resumes, from the stored state (the same in
 * every process, for a raw history and a view sent back alike): what that compaction left, and
 * the view's messages after the newest one it kept (only counted for the cost trigger).
 */
function paceOf(view: SessionView, policy: Readonly<CompactPolicy>): CallPace {
  const trough = view.matched?.pace?.trough;
  if (!policy.costTrigger) return { trough, appended: 0 };
  const kept = view.matched?.keptIds ?? [];
  const newestKept = kept.at(-1);
  const { entries } = view;
  let appended = 0;
  while (appended < entries.length && entries[entries.length - 1 - appended]!.item.id !== newestKept)
    appended++;
  // The newest kept message is not in this view (rewritten by the caller): the view's messages
  // beyond as many as the compaction kept.
  if (appended === entries.length && trough !== undefined)
    appended = Math.max(0, entries.length - kept.length);
  return { trough, appended };
}

/** Steps 1-4 of one call. */
export async function prepareRequest(deps: PipelineDeps, input: PreflightInput): Promise<PreparedRequest> {
  const started = Date.now();
  // Many new messages (a first call, a rebuilt history): indexed and counted in slices.
  const slice = manyNewMessages(deps, input) ? new TimeSlice() : undefined;
  // A long history this process has not seen: its counts may be stored with its state.
  const known =
    slice && input.messages.length >= PERSIST_COUNTS_FROM && deps.histories.heldLength(input.key) === 0
      ? deps.counts.read(input.key, input.codec.format)
      : undefined;
  const { indexed, repairs } = slice
    ? await indexMessagesInSlices(deps, input, slice)
    : indexMessages(deps, input);
  const stored = await deps.store.get(input.key);
  const fresh = { count: 0 };
  // Step 2: resume the view (extended when possible, rebuilt otherwise; in slices for many new messages).
  const viewContext = viewContextOf(deps, input, indexed, stored, fresh);
  if (slice) await countAhead({ ...viewContext, stored, known: await known }, slice);
  const view =
    extendedView(indexed, viewContext) ??
    keepView(
      deps,
      input,
      indexed,
      slice ? await runStepsYielding(buildViewSteps(viewContext), slice) : buildView(viewContext),
    );
  const state = await rememberProtected(deps.store, input.key, view, stored);
  deps.counts.schedule(input.key, indexed);
  const counted = countRequest(deps, input, view);
  const calibrated = deps.calibration.count(input.key, counted.tokensBefore, deps.counter.exact);
  const call = recordCall(deps, input.key, input.policy.cacheLifetimeMs);
  const decision = decide(calibrated.tokens, input.policy, input.maxContextTokens, {
    force: input.options.force === true,
    coldCache: call.idle,
    hardLimit: hardLimitOf(input.options),
    pace: paceOf(view, input.policy),
    price: deps.cachePrice,
  });
  const scale = counted.tokensBefore > 0 ? calibrated.tokens / counted.tokensBefore : 1;
  // Written out rather than `{ ...input, ... }`: on Node 20 a literal that adds properties after
  // a spread builds a new hidden class per call (~40 us here, a third of a warm call).
  const prepared: PreparedRequest = {
    context: input.context,
    key: input.key,
    messages: input.messages,
    codec: input.codec,
    policy: input.policy,
    options: input.options,
    maxContextTokens: input.maxContextTokens,
    indexed,
    repairs,
    state,
    view,
    summaryWire: counted.summaryWire,
    summaryTokens: counted.summaryTokens,
    breakdown: counted.breakdown,
    tokensBefore: calibrated.tokens,
    localTokensBefore: counted.tokensBefore,
    scale,
    localDecision: scale === 1 ? decision : toLocal(decision, scale),
    calibrated,
    decision,
    started,
    countedFresh: fresh.count,
    callNumber: call.number,
    decisionSpanId: undefined,
    decisionEvent: undefined,
  };
  for (const repair of repairs)
    deps.bus.emit(input.context, 'compact.repair', { ...repair }, { start: started });
  if (slice)
    await emitMediaEstimatesInSlices(
      deps.bus,
      input.context,
      input.messages,
      indexed.changedFrom,
      started,
      slice,
    );
  else emitMediaEstimates(deps.bus, input.context, input.messages, indexed.changedFrom, started);
  if (!decision.triggered && !deps.bus.observed) return prepared;
  const decisionEvent = emitDecision(deps, prepared);
  return { ...prepared, decisionSpanId: decisionEvent.spanId, decisionEvent };
}

/** The `compact.token_estimate` and `compact.trigger_decision` events. */
function emitDecision(
  deps: PipelineDeps,
  prepared: PreparedRequest,
): CompactEvent<'compact.trigger_decision'> {
  const { context, policy, decision, tokensBefore } = prepared;
  if (decision.triggered) context.archived = [];
  const estimate = deps.bus.emit(
    context,
    'compact.token_estimate',
    {
      model: deps.model,
      tEst: tokensBefore,
      maxTokens: prepared.maxContextTokens,
      usagePct: tokensBefore / prepared.maxContextTokens,
      usagePercent: Math.round((10_000 * tokensBefore) / prepared.maxContextTokens) / 100,
      breakdown: prepared.breakdown,
      messageCount: prepared.view.entries.length + (prepared.summaryWire === undefined ? 0 : 1),
      countedFresh: prepared.countedFresh,
      callNumber: prepared.callNumber,
      ...(prepared.calibrated.lastReportedTokens === undefined
        ? {}
        : {
            tEstLocal: prepared.localTokensBefore,
            lastReported: prepared.calibrated.lastReportedTokens,
            ...(prepared.calibrated.ratio === undefined
              ? {}
              : { calibrationRatio: prepared.calibrated.ratio }),
          }),
    },
    { start: prepared.started },
  );
  if (decision.triggered) deps.bus.hold(context);
  return deps.bus.emit(
    context,
    'compact.trigger_decision',
    {
      triggered: decision.triggered,
      reason: decision.reason,
      policy: {
        triggerPct: policy.triggerPct,
        hardCapBuffer: policy.hardCapBuffer,
        keepRecentTurns: policy.keepRecentTurns,
        keepToolIoPairs: policy.keepToolIoPairs,
        strategy: String(policy.strategy),
      },
      tEst: tokensBefore,
      triggerTokens: decision.triggerTokens,
      budget: decision.budget,
      targetTokens: decision.targetTokens,
      manual: prepared.options.force === true,
      ...(prepared.options.note ? { note: prepared.options.note } : {}),
    },
    { start: estimate.endTime },
  );
}
