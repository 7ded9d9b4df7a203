/**
 * The first call of a fresh process on a known session, answered without indexing its
 * history (issue 47 point 1). A warm process leaves, after calls whose answer was the history
 * as given (no summary, no rewrite, nothing stripped), a small record with the session's
 * state (`<key>::quick`, store/stored-counts.ts): the history's length, its print
 * (quick-print.ts: a chain of the messages' shapes, no content hash), its token sums and
 * pinned messages. A fresh process given that history plus a few new messages compares the
 * print, counts and checks only the new messages, decides, and when nothing triggers sends
 * the history as given: what the warm process would send. Anything else (a compaction
 * stored, a triggered decision, new messages that pin, repair or carry a summary, events
 * observed, background preparation) takes the full path.
 *
 * After the call, in slices, the session is indexed and counted as a full first call would
 * (with the stored counts), so its next call is warm; the session's next call waits for it.
 * An exact count that differs from the record's (an edit the print did not see) drops the record.
 */
import { countsExactly } from '../../counting/usage-calibration.js';
import type { CompactionResult } from '../../manager/manager-options.js';
import { stripMeta } from '../../messages/formats/message-codec.js';
import { lanesString } from '../../messages/hash-string.js';
import { type IndexedEntry, positioned } from '../../messages/message-index.js';
import { isPinned } from '../../messages/partition.js';
import type { CompactPolicy } from '../../policy.js';
import { listLength } from '../../session/packed-state.js';
import type { SessionState } from '../../session/session-store.js';
import { deleteStoredCounts, type QuickRecord, readQuickRecord } from '../../store/stored-counts.js';
import { TimeSlice } from '../../time-slice.js';
import { decide, hardLimitOf } from '../decide.js';
import { indexMessagesInSlices } from '../index/index-messages.js';
import { IndexedHistory } from '../index/index-request.js';
import { fixedTokens, type PipelineDeps, type PreflightInput, summaryText } from '../preflight-deps.js';
import type { PreparedRequest } from '../prepare-request.js';
import { resumeAndCount } from '../view/resume-and-count.js';
import { isLayout, layoutRequest, stampOf } from './quick-compacted.js';
import { samplePrints } from './quick-print.js';
import { pinsOf, plainState, QUICK_FROM, ruleOf } from './quick-records.js';

/** New messages past the record's a quick first call takes (each is parsed and counted on the call). */
const QUICK_NEW = 64;

/** A new message a quick call can take as it is: not pinned, no summary. */
function plainNew(entry: IndexedEntry, policy: Readonly<CompactPolicy>, pins: string): boolean {
  if (entry.summaryVersion !== undefined) return false;
  if (entry.parsed.providerCompaction !== undefined || isPinned(entry, policy)) return false;
  const base = entry.parsed.explicitId ?? lanesString(entry.hashHigh, entry.hashLow, 'h:');
  return pins.length === 0 || !pins.includes(base);
}

/**
 * A history converted on demand (an integration's first call of a long conversation: the
 * LangChain middleware), passed as the call option of this key with an empty `messages`: a
 * quick first call reads only the messages it samples and the new ones; any other call
 * converts them all ({@link LazyHistory.all}) and goes on with them.
 */
export const LAZY_HISTORY: unique symbol = Symbol('agent-compaction.lazyHistory');

export interface LazyHistory {
  readonly length: number;
  /** Message `i`, converted. */
  at(i: number): unknown;
  /** Every message, converted (in slices: it is called on the call's path only when it must). */
  all(): Promise<unknown[]>;
}

/**
 * Set on the result of a quick first call of a {@link LazyHistory}: its request is the history
 * as given (converted: the messages at `metaAt` without their `meta`); `messages` is empty.
 */
export const AS_GIVEN: unique symbol = Symbol('agent-compaction.asGiven');

/** The lazy history a call's options carry, if any. */
export function lazyHistoryOf(options: object): LazyHistory | undefined {
  return (options as { [LAZY_HISTORY]?: LazyHistory })[LAZY_HISTORY];
}

/**
 * False when {@link quickOrFull} would hand the call's messages and options back as they are
 * (no lazy history, and no quick answer possible: a session this process holds, a short
 * history...). Synchronous: a warm call pays no awaits for the quick path it cannot take.
 */
export function mayGoQuick(deps: PipelineDeps, input: PreflightInput, tryQuick: boolean): boolean {
  if (lazyHistoryOf(input.options)) return true;
  return tryQuick && mayMatch(deps, input, input.messages.length);
}

/** The checks of {@link matchingRecord} made before reading the store. */
function mayMatch(deps: PipelineDeps, input: PreflightInput, n: number): boolean {
  if (n < QUICK_FROM || input.options.force === true || deps.bus.observed) return false;
  return deps.histories.heldLength(input.key) === 0 && !deps.counts.finishing(input.key);
}

/**
 * A quick first call (see {@link quickFirstCall}), or the call's messages and options for the
 * full path: a lazy history's messages all converted, the option dropped.
 */
export async function quickOrFull<M, O extends object>(
  deps: PipelineDeps,
  input: PreflightInput & { readonly options: O },
  tryQuick: boolean,
): Promise<{ quick: CompactionResult<M> } | { messages: readonly unknown[]; options: O }> {
  const lazy = lazyHistoryOf(input.options);
  const quick = tryQuick ? await quickFirstCall<M>(deps, input, lazy) : undefined;
  if (quick) return { quick };
  if (!lazy) return { messages: input.messages, options: input.options };
  const { [LAZY_HISTORY]: _lazy, ...options } = input.options as O & { [LAZY_HISTORY]?: LazyHistory };
  return { messages: await lazy.all(), options: options as O };
}

/**
 * The answer of a fresh process's first call on a known session, from its quick record;
 * `undefined` when the full path must answer.
 */
export async function quickFirstCall<M>(
  deps: PipelineDeps,
  input: PreflightInput,
  lazy?: LazyHistory,
): Promise<CompactionResult<M> | undefined> {
  const messages = input.messages;
  const at = lazy ? (i: number) => lazy.at(i) : (i: number) => messages[i];
  const n = lazy ? lazy.length : messages.length;
  const found = await matchingRecord(deps, input, { at, n }, lazy);
  if (!found) return undefined;
  const { quick, state } = found;
  const added: unknown[] = [];
  for (let i = quick.length; i < n; i++) added.push(at(i));
  const request = quickRequest(deps, input, found, lazy);
  if (!request) return undefined;
  const layout = quick.compacted;
  const sums = addedTokens(
    deps,
    input,
    quick,
    added,
    lazy ? undefined : { sent: request.sent, at: request.sent.length - (layout ? 0 : added.length) },
  );
  if (!sums) return undefined;
  const counted = quickDecision(deps, input, found, sums, added.length);
  if (counted.decision.triggered) return undefined;
  noteCallTime(deps, input.key, counted.now);
  deps.calibration.noteSent(input.key, counted.local);
  const version = layout ? state!.version : 0;
  deps.counts.finishAfter(input.key, () =>
    warmAfter(deps, input, { n, local: counted.local, version }, lazy),
  );
  return quickResult<M>(input, quick, request, counted, version, lazy);
}

type QuickFound = { quick: QuickRecord; state: SessionState | undefined };

/**
 * The session's quick record when it holds for this call (same scope, rule, state, pins and
 * print; at most {@link QUICK_NEW} new messages; no other call of the session under way).
 */
async function matchingRecord(
  deps: PipelineDeps,
  input: PreflightInput,
  history: { at: (i: number) => unknown; n: number },
  lazy: LazyHistory | undefined,
): Promise<QuickFound | undefined> {
  const { key, codec, policy } = input;
  const { at, n } = history;
  if (!mayMatch(deps, input, n)) return undefined;
  const [quick, state] = await Promise.all([readQuickRecord(deps.store, key), deps.store.get(key)]);
  if (!quick || quick.scope !== deps.counts.scope(codec.format) || quick.rule !== ruleOf(policy))
    return undefined;
  const layout = quick.compacted;
  if (layout === undefined ? !plainState(state) : !layoutHolds(quick, state, lazy)) return undefined;
  if (quick.pins !== pinsOf(state)) return undefined;
  if (quick.length === 0 || quick.length > n || n - quick.length > QUICK_NEW) return undefined;
  // Another call of the session started meanwhile.
  if (deps.histories.heldLength(key) !== 0 || deps.counts.finishing(key)) return undefined;
  if (samplePrints(at, quick.length) !== quick.print) return undefined;
  return { quick, state };
}

/**
 * The request a quick call sends (its new messages written later), and its summary if compacted;
 * `undefined` when a compacted record's layout does not read as a request (full path).
 */
function quickRequest(
  deps: PipelineDeps,
  input: PreflightInput,
  { quick, state }: QuickFound,
  lazy: LazyHistory | undefined,
) {
  const layout = quick.compacted;
  const summary = layout && state?.summary;
  const summaryBody = summary ? summaryText(deps, input.key, state.version, summary.text) : undefined;
  const summaryWire = summaryBody === undefined ? undefined : input.codec.summaryMessage(summaryBody);
  // A compacted record holds for a history given whole (layoutHolds): `messages` is it.
  const history = { messages: input.messages, length: quick.length, metaAt: quick.metaAt, strip: stripMeta };
  const sent = layout ? layoutRequest(layout, history, summaryWire) : lazy ? [] : input.messages.slice();
  // What a warm call sends of a message with `meta`: the codec's wire, the message without it.
  if (!layout && !lazy) for (const i of quick.metaAt) sent![i] = stripMeta(sent![i]);
  return sent && { sent, summary: summary || undefined, summaryBody };
}

/** The quick call's count (the record's sums plus the new messages') and its decision. */
function quickDecision(
  deps: PipelineDeps,
  input: PreflightInput,
  { quick, state }: QuickFound,
  sums: { system: number; developer: number; messages: number },
  added: number,
) {
  const { key, policy, options } = input;
  const fixed = fixedTokens(deps, options);
  const breakdown = {
    system: fixed.system + quick.sums.system + sums.system,
    developer: quick.sums.developer + sums.developer,
    toolsSchema: fixed.toolsSchema,
    messages:
      deps.counter.requestOverhead +
      quick.sums.messages +
      sums.messages +
      (quick.compacted?.summaryTokens ?? 0),
  };
  const local = breakdown.system + breakdown.developer + breakdown.toolsSchema + breakdown.messages;
  const calibrated = deps.calibration.count(key, local, countsExactly(deps.counter, input.codec.format));
  const now = deps.clock();
  const last = deps.lastCalls.get(key);
  const lifetime = policy.cacheLifetimeMs;
  const decision = decide(calibrated.tokens, policy, input.maxContextTokens, {
    force: false,
    coldCache: last !== undefined && lifetime > 0 && now - last.at > lifetime,
    hardLimit: hardLimitOf(options),
    pace: paceOf(quick, state, added, policy),
    price: deps.cachePrice,
  });
  return { local, tokens: calibrated.tokens, decision, now };
}

/** Records the session's call at `now` (the cache lifetime's clock). */
function noteCallTime(deps: PipelineDeps, key: string, now: number): void {
  const last = deps.lastCalls.get(key);
  if (last === undefined) deps.lastCalls.set(key, { at: now, count: 1 });
  else {
    last.at = now;
    last.count++;
  }
}

/** The untriggered result of a quick call. */
function quickResult<M>(
  input: PreflightInput,
  quick: QuickRecord,
  request: NonNullable<ReturnType<typeof quickRequest>>,
  counted: ReturnType<typeof quickDecision>,
  version: number,
  lazy: LazyHistory | undefined,
): CompactionResult<M> {
  const { decision, tokens } = counted;
  const result: CompactionResult<M> = {
    messages: request.sent as M[],
    applied: false,
    reason: decision.reason,
    tokensBefore: tokens,
    tokensAfter: tokens,
    budget: decision.budget,
    kept: { pinned: quick.pinned, recentTurns: 0, toolPairs: 0 },
    prunedCount: 0,
    version,
    format: input.codec.format,
    levels: [],
    repairs: [],
  };
  const { summary, summaryBody } = request;
  if (summary && summaryBody !== undefined)
    result.summary = {
      text: summaryBody,
      version,
      tokens: quick.compacted!.summaryTokens,
      summarizer: summary.summarizer ?? 'unknown',
    };
  if (lazy) Object.assign(result, { [AS_GIVEN]: quick.metaAt });
  return result;
}

/**
 * The tokens of the messages after the record's, by role group; `undefined` when one of them
 * is not plain (see {@link plainNew}) or they do not pair among themselves (the record's
 * history had no open call: a warm call with an unanswered call would have repaired it).
 */
function addedTokens(
  deps: PipelineDeps,
  input: PreflightInput,
  quick: QuickRecord,
  added: readonly unknown[],
  /** The request, its new messages written from position `at`. */
  out: { sent: unknown[]; at: number } | undefined,
) {
  const { codec, policy } = input;
  const sums = { system: 0, developer: 0, messages: 0 };
  const tiny = new IndexedHistory();
  tiny.update(added, codec, deps.index);
  if (tiny.pairer.findings.length > 0 || tiny.pairer.openFindings().length > 0) return undefined;
  for (let k = 0; k < added.length; k++) {
    const entry = deps.index.entry(added[k], quick.length + k, codec);
    if (!plainNew(entry, policy, quick.pins)) return undefined;
    if (out) out.sent[out.at + k] = entry.wire;
    let tokens = entry.tokens.get(deps.counter);
    if (tokens === undefined) {
      tokens = deps.counter.countMessage(positioned(entry.parsed, '', quick.length + k));
      entry.tokens.set(deps.counter, tokens);
    }
    const role = entry.parsed.role;
    if (role === 'system') sums.system += tokens;
    else if (role === 'developer') sums.developer += tokens;
    else sums.messages += tokens;
  }
  return sums;
}

/**
 * After a quick call: the session indexed, counted (with its stored counts) and its view built,
 * in slices, as a full first call would have; a count that differs from the quick one drops
 * the record (the print missed an edit).
 */
async function warmAfter(
  deps: PipelineDeps,
  input: PreflightInput,
  quick: { n: number; local: number; version: number },
  lazy: LazyHistory | undefined,
): Promise<void> {
  const { n, local, version } = quick;
  const slice = new TimeSlice();
  await slice.pause();
  // The caller only appends to its array; what it held at the call is its first n messages.
  const messages = lazy ? await lazy.all() : input.messages;
  if (deps.histories.heldLength(input.key) !== 0 || messages.length < n) return;
  const call = { ...input, messages: messages.slice(0, n) };
  const known = deps.counts.read(input.key, input.codec.format);
  const { indexed, repairs } = await indexMessagesInSlices(deps, call, slice);
  const stored = await deps.store.get(input.key);
  const resumed = await resumeAndCount(deps, call, indexed, stored, { slice, known: await known }, false);
  const differs =
    !resumed.bounded && (resumed.counted.tokensBefore !== local || resumed.view.version !== version);
  if (repairs.length > 0 || differs) await deleteStoredCounts(deps.store, input.key);
  // The record's walk of this view made now, not beside the session's next calls.
  else if (!resumed.bounded && indexed.view === resumed.view)
    deps.counts.quick.note(
      call,
      deps.counts.scope(input.codec.format),
      resumed.view,
      stored,
      indexed.generation,
    );
}

/**
 * A compacted session's record holds for this call: made under the stored state as it is (a
 * compaction since, in any process, changes its stamp), well formed, on a history given whole.
 */
function layoutHolds(quick: QuickRecord, state: SessionState | undefined, lazy: LazyHistory | undefined) {
  const layout = quick.compacted;
  if (lazy || state === undefined || state.local || layout === undefined) return false;
  return layout.stamp === stampOf(state) && isLayout(layout, quick.length);
}

/**
 * The cost trigger's pace (as call-pace.ts reads the view): for a plain record a view of n
 * messages under a state that kept none; for a compacted one, the messages after the newest
 * one the compaction kept, the new ones included (they are plain: none is a kept message).
 */
function paceOf(
  quick: QuickRecord,
  state: SessionState | undefined,
  added: number,
  policy: Readonly<CompactPolicy>,
) {
  const layout = quick.compacted;
  if (!layout) return { trough: undefined, appended: policy.costTrigger ? quick.length + added : 0 };
  const trough = state?.pace?.trough;
  if (!policy.costTrigger) return { trough, appended: 0 };
  if (!layout.paceFound && trough !== undefined)
    return {
      trough,
      appended: Math.max(0, layout.entries + added - (state ? listLength(state, 'keptIds') : 0)),
    };
  return { trough, appended: layout.paceAfter + added };
}

/** Notes an untriggered call for its session's quick record (see {@link QuickRecords.note}). */
export function noteQuick(deps: PipelineDeps, prepared: PreparedRequest): void {
  if (prepared.bounded || prepared.repairs.length > 0 || prepared.messages.length < QUICK_FROM) return;
  const { view, indexed } = prepared;
  deps.counts.quick.note(
    prepared,
    deps.counts.scope(prepared.codec.format),
    view,
    prepared.state,
    indexed.generation,
    prepared.summaryTokens,
  );
}
