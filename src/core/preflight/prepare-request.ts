/**
 * Steps 1 to 4 of a preflight, the part every call runs: index the request (positional
 * pairing, broken input rejected or repaired), resume the session's view, count it, decide.
 * On the warm path (a history that grew by appending, nothing triggered) each step works on
 * what is new since the session's last call only.
 */

import type { CalibratedCount } from '../counting/usage-calibration.js';
import type { CompactEvent, TokenBreakdown } from '../events/events.js';
import type { SessionState } from '../session/session-store.js';
import { TimeSlice } from '../time-slice.js';
import { type Decision, type LocalFit, toLocal } from './decide.js';
import type { InputRepair } from './index/check-pairing.js';
import {
  indexMessages,
  indexMessagesInSlices,
  manyNewMessages,
  newLongMessage,
} from './index/index-messages.js';
import type { IndexedHistory } from './index/index-request.js';
import { emitMediaEstimates, emitMediaEstimatesInSlices } from './index/media-estimates.js';
import { PERSIST_COUNTS_FROM } from './index/persist-counts.js';
import type { PipelineDeps, PreflightInput } from './preflight-deps.js';
import { rememberProtected } from './view/remember-protected.js';
import { resumeAndCount } from './view/resume-and-count.js';
import type { SessionView } from './view/session-view.js';

export {
  fixedTokens,
  forgetSession,
  type PipelineDeps,
  type PreflightInput,
  summaryText,
} from './preflight-deps.js';

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
  /**
   * True when the count is a bound (a first call of a long history nobody had counted, under
   * its trigger by the bound; see bound-first-call.ts): never below the exact count.
   */
  readonly bounded?: boolean;
  /** The decision event's span id, under which the compaction's events nest. */
  readonly decisionSpanId: string | undefined;
  /**
   * The `compact.trigger_decision` event. When triggered it is held (with the events under it)
   * until the compaction ends, so that it can carry what was kept and pruned.
   */
  readonly decisionEvent?: CompactEvent<'compact.trigger_decision'> | undefined;
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

/** Steps 1-4 of one call. */
export async function prepareRequest(deps: PipelineDeps, input: PreflightInput): Promise<PreparedRequest> {
  const started = Date.now();
  // The exact counting left by a first call decided from a bound (it runs in slices).
  const finishing = deps.counts.finishing(input.key);
  if (finishing) await finishing;
  // Many new messages (a first call, a rebuilt history): indexed and counted in slices.
  const slice = manyNewMessages(deps, input) ? new TimeSlice() : undefined;
  // A long history this process has not seen: its counts may be stored with its state.
  const known =
    slice && input.messages.length >= PERSIST_COUNTS_FROM && deps.histories.heldLength(input.key) === 0
      ? deps.counts.read(input.key, input.codec.format)
      : undefined;
  // A warm call's few new messages with one of megabytes: hashed and counted in slices too.
  const ahead = slice ?? (newLongMessage(deps, input) ? new TimeSlice() : undefined);
  const { indexed, repairs } = ahead
    ? await indexMessagesInSlices(deps, input, ahead)
    : indexMessages(deps, input);
  const stored = await deps.store.get(input.key);
  const call = recordCall(deps, input.key, input.policy.cacheLifetimeMs);
  const cold = slice ? { slice, known: await known } : undefined;
  const resuming = resumeAndCount(deps, input, indexed, stored, cold ?? ahead, call.idle);
  const resumed = resuming instanceof Promise ? await resuming : resuming;
  const { view, counted, calibrated, decision } = resumed;
  const remembering = rememberProtected(deps.store, input.key, view, stored);
  const state = remembering instanceof Promise ? await remembering : remembering;
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
    localDecision: scale === 1 ? decision : toLocal(decision, scale, fitOf(counted.tokensBefore, calibrated)),
    calibrated,
    decision,
    started,
    countedFresh: resumed.fresh,
    callNumber: call.number,
    bounded: resumed.bounded,
    decisionSpanId: undefined,
    decisionEvent: undefined,
  };
  for (const repair of repairs)
    deps.bus.emit(input.context, 'compact.repair', { ...repair }, { start: started });
  if (ahead)
    await emitMediaEstimatesInSlices(
      deps.bus,
      input.context,
      input.messages,
      indexed.changedFrom,
      started,
      ahead,
    );
  else emitMediaEstimates(deps.bus, input.context, input.messages, indexed.changedFrom, started);
  if (!decision.triggered && !deps.bus.observed) return prepared;
  // The events are redacted, and a process's first redaction runs the rules' regexes for the
  // first time (~10 ms, issue 47): a sliced call runs them in a turn of their own.
  if (ahead) await ahead.pause();
  const decisionEvent = emitDecision(deps, prepared);
  if (ahead) await ahead.pause();
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

/** The calibrated count's fit for {@link toLocal}, once reported usage calibrated it. */
function fitOf(local: number, calibrated: CalibratedCount): LocalFit | undefined {
  return calibrated.ratio === undefined
    ? undefined
    : { local, tokens: calibrated.tokens, marginal: calibrated.ratio };
}
