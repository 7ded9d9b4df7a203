/**
 * The answer of a call that did not trigger: the view as it stands, assembled from a cache
 * that warm calls extend instead of rebuilding.
 */
import type { CompactionResult } from '../../manager/manager-options.js';
import type { MessageFormat } from '../../messages/message.js';
import { runSteps, runStepsYielding, type Steps } from '../../time-slice.js';
import { type PipelineDeps, type PreparedRequest, summaryText } from '../prepare-request.js';
import type { AssembledCache, SessionView, ViewEntry } from '../view/session-view.js';
import { assembleSteps } from './assemble.js';
import { newestFault, reportUnsound, withNewestAsGiven } from './request-guard.js';
import { resultCopy } from './result-copy.js';

/**
 * What a compaction kept verbatim: pinned messages, conversational turns none of whose messages
 * was rewritten (a user message and what follows it up to the next one), and tool rounds none
 * of whose calls or results was rewritten. A round whose results were cleared, or a turn with
 * a shortened argument or a cut message, is not counted as kept.
 */
export function keptCounts(entries: readonly ViewEntry[]) {
  return runSteps(keptCountsSteps(entries));
}

/** Entries read between two steps of the O(view) walks below. */
const STEP_ENTRIES = 1_024;

/**
 * {@link keptCounts} as steps that yield every {@link STEP_ENTRIES} entries (a 20k-message
 * compaction's walk held the loop about 14 ms on a loaded machine: each entry a cache miss).
 */
export function* keptCountsSteps(entries: readonly ViewEntry[]): Steps<{
  pinned: number;
  recentTurns: number;
  toolPairs: number;
}> {
  let pinned = 0;
  let recentTurns = 0;
  // The open turn: undefined before the first user message, else whether it is still verbatim.
  let turnVerbatim: boolean | undefined;
  const rounds = new Map<number, boolean>();
  for (let k = 0; k < entries.length; k++) {
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    const entry = entries[k]!;
    const parsed = entry.item.entry.parsed;
    if (entry.pinned) {
      pinned++;
      continue;
    }
    const verbatim = entry.rewrite === undefined;
    if (parsed.role === 'user' && parsed.toolResults.length === 0 && !entry.userText) {
      if (turnVerbatim === true) recentTurns++;
      turnVerbatim = verbatim;
    } else if (turnVerbatim !== undefined && !verbatim) turnVerbatim = false;
    if (entry.round >= 0 && (parsed.toolCalls.length > 0 || parsed.toolResults.length > 0))
      rounds.set(entry.round, (rounds.get(entry.round) ?? true) && verbatim);
  }
  if (turnVerbatim === true) recentTurns++;
  let toolPairs = 0;
  for (const kept of rounds.values()) if (kept) toolPairs++;
  return { pinned, recentTurns, toolPairs };
}

/** The request of `entries` (and the summary message, when there is one), to be extended by later calls. */
export function assembledCache(
  entries: readonly ViewEntry[],
  summaryWire: unknown,
  format: MessageFormat,
): AssembledCache {
  return runSteps(assembledCacheSteps(entries, summaryWire, format));
}

/** {@link assembledCache} as steps that yield every {@link STEP_ENTRIES} entries of its walk. */
export function* assembledCacheSteps(
  entries: readonly ViewEntry[],
  summaryWire: unknown,
  format: MessageFormat,
): Steps<AssembledCache> {
  let pinned = 0;
  let head = 0;
  for (let k = 0; k < entries.length; k++) {
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    const entry = entries[k]!;
    if (entry.pinned) pinned++;
    if (entry.pinned || entry.userText) head++;
  }
  yield;
  const wires = yield* assembleSteps(entries, summaryWire, format);
  return { summaryWire, count: entries.length, wires, pinned, head };
}

/** Whether the view's assembled cache can be extended for `summaryWire` (else it is rebuilt). */
function extendable(view: SessionView, summaryWire: unknown): boolean {
  const cache = view.assembled;
  // Without any unpinned entry yet, a new pinned one would go to the head: rebuild then.
  return (
    cache !== undefined &&
    cache.summaryWire === summaryWire &&
    cache.count <= view.entries.length &&
    (summaryWire === undefined || cache.wires.length > cache.head + 1)
  );
}

/**
 * Before {@link untriggeredResult}: a cold call's view (decided from a bound) whose assembled cache
 * must be rebuilt has it built in slices of the loop, so the result only extends it (a 16k-message rebuild ran
 * at once in the same stretch as the rest of the answer). The result is the same either way.
 */
export function assembleUntriggered(prepared: PreparedRequest): Promise<void> | undefined {
  const { view, codec } = prepared;
  const summaryWire = view.version > 0 ? prepared.summaryWire : undefined;
  // Only a call decided from a bound (a cold one, which pauses anyway): a warm call, even one
  // that rebuilds the cache, answers without a turn of the loop.
  if (!prepared.bounded || extendable(view, summaryWire)) return undefined;
  const { entries, version } = view;
  return runStepsYielding(assembledCacheSteps(entries, summaryWire, codec.format)).then((built) => {
    // Kept only when built from the entries as they stand (else the result rebuilds at once).
    if (view.version === version && built.count === entries.length && !extendable(view, summaryWire))
      view.assembled = built;
  });
}

/**
 * The view assembled, from the cache when the view only grew since: new entries go at the end
 * (after the summary, or in history order without one), so the cached request is extended.
 */
function assembledView(view: SessionView, summaryWire: unknown, format: MessageFormat): AssembledCache {
  const cache = view.assembled;
  const entries = view.entries;
  if (cache === undefined || !extendable(view, summaryWire)) {
    view.assembled = assembledCache(entries, summaryWire, format);
    return view.assembled;
  }
  for (let k = cache.count; k < entries.length; k++) {
    cache.wires.push(entries[k]!.wire);
    if (entries[k]!.pinned) cache.pinned++;
    if (entries[k]!.pinned || entries[k]!.userText) cache.head++;
  }
  cache.count = entries.length;
  return cache;
}

/** The answer of a call that did not trigger: the view as it stands. */
export function untriggeredResult<M>(deps: PipelineDeps, prepared: PreparedRequest): CompactionResult<M> {
  const { view, codec } = prepared;
  // A bound is not an estimate to calibrate against reported usage.
  if (!prepared.bounded) deps.calibration.noteSent(prepared.key, prepared.localTokensBefore);
  const summaryWire = view.version > 0 ? prepared.summaryWire : undefined;
  const assembled = assembledView(view, summaryWire, codec.format);
  const result: CompactionResult<M> = {
    // A fresh array per call (the caller owns it and may push to it; the cache is extended
    // next call), made ahead of the call for long views (result-copy.ts).
    messages: resultCopy(assembled) as M[],
    applied: false,
    reason: prepared.decision.reason,
    tokensBefore: prepared.tokensBefore,
    tokensAfter: prepared.tokensBefore,
    budget: prepared.decision.budget,
    kept: { pinned: assembled.pinned, recentTurns: 0, toolPairs: 0 },
    prunedCount: 0,
    version: view.version,
    format: codec.format,
    levels: [],
    repairs: prepared.repairs,
  };
  // The last guard (request-guard.ts), one comparison: the newest message goes last, as given.
  const fault = newestFault(
    result.messages,
    prepared,
    view.entries,
    (entry) =>
      prepared.localTokensBefore - entry.tokens + entry.originalTokens > prepared.localDecision.limit,
  );
  if (fault) {
    const repaired = withNewestAsGiven(result.messages, prepared, view.entries);
    reportUnsound(deps, prepared, fault, repaired ? 'rewrite_dropped' : 'given_history');
    result.messages = (repaired ?? prepared.indexed.items.map((item) => item.entry.wire)) as M[];
  }
  if (summaryWire !== undefined && view.previousSummary !== undefined) {
    result.summary = {
      text:
        view.summarySigned ??
        view.summaryItem?.entry.parsed.text ??
        summaryText(deps, prepared.key, view.version, view.previousSummary, view.matched?.local),
      version: view.version,
      tokens: prepared.summaryTokens,
      summarizer: view.matched?.summary?.summarizer ?? 'unknown',
      ...(view.matched?.local ? { local: true as const } : {}),
    };
  }
  return result;
}

/** The reason of a compaction declined by `policy.clearAtLeast`. */
export const DECLINED_REASON = 'frees < clear_at_least';

/**
 * A triggered compaction not applied (`policy.clearAtLeast`: it would free too little): the
 * held decision event says so, and the view goes out as it stands.
 */
export function declinedResult<M>(deps: PipelineDeps, prepared: PreparedRequest): CompactionResult<M> {
  if (prepared.decisionEvent)
    Object.assign(prepared.decisionEvent.properties, { triggered: false, reason: DECLINED_REASON });
  deps.bus.release(prepared.context);
  return { ...untriggeredResult<M>(deps, prepared), reason: DECLINED_REASON };
}
