/**
 * The first call of a fresh process on a known session, answered without indexing its
 * history (issue 47 point 1). A warm process leaves, after calls whose answer was the history
 * as given (no summary, no rewrite, nothing stripped), a small record with the session's
 * state (`<key>::quick`, session/stored-counts.ts): the history's length, its print
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
import type { CompactionResult } from '../manager/manager-options.js';
import { stripMeta } from '../messages/formats/message-codec.js';
import { type IndexedEntry, positioned } from '../messages/message-index.js';
import { isPinned } from '../messages/partition.js';
import type { CompactPolicy } from '../policy.js';
import { deleteStoredCounts, type QuickRecord, readQuickRecord } from '../session/stored-counts.js';
import { TimeSlice } from '../time-slice.js';
import { decide, hardLimitOf } from './decide.js';
import { indexMessagesInSlices } from './index-messages.js';
import { IndexedHistory } from './index-request.js';
import { fixedTokens, type PipelineDeps, type PreflightInput } from './preflight-deps.js';
import type { PreparedRequest } from './prepare-request.js';
import { samplePrints } from './quick-print.js';
import { pinsOf, plainState, QUICK_FROM, ruleOf } from './quick-records.js';
import { resumeAndCount } from './resume-and-count.js';

/** New messages past the record's a quick first call takes (each is parsed and counted on the call). */
const QUICK_NEW = 64;

/** A new message a quick call can take as it is: not pinned, no summary. */
function plainNew(entry: IndexedEntry, policy: Readonly<CompactPolicy>, pins: string): boolean {
  if (entry.summaryVersion !== undefined) return false;
  if (entry.parsed.providerCompaction !== undefined || isPinned(entry, policy)) return false;
  const base = entry.parsed.explicitId ?? `h:${entry.hash}`;
  return pins.length === 0 || !pins.includes(base);
}

/**
 * The answer of a fresh process's first call on a known session, from its quick record;
 * `undefined` when the full path must answer.
 */
export async function quickFirstCall<M>(
  deps: PipelineDeps,
  input: PreflightInput,
): Promise<CompactionResult<M> | undefined> {
  const { key, messages, codec, policy, options } = input;
  const n = messages.length;
  if (n < QUICK_FROM || options.force === true || deps.bus.observed) return undefined;
  if (deps.histories.heldLength(key) !== 0 || deps.counts.finishing(key)) return undefined;
  const [quick, state] = await Promise.all([readQuickRecord(deps.store, key), deps.store.get(key)]);
  if (!quick || quick.scope !== deps.counts.scope(codec.format) || quick.rule !== ruleOf(policy))
    return undefined;
  if (!plainState(state) || quick.pins !== pinsOf(state)) return undefined;
  if (quick.length === 0 || quick.length > n || n - quick.length > QUICK_NEW) return undefined;
  // Another call of the session started meanwhile.
  if (deps.histories.heldLength(key) !== 0 || deps.counts.finishing(key)) return undefined;
  if (samplePrints(messages, quick.length) !== quick.print) return undefined;
  const sent = messages.slice();
  // What a warm call sends of a message with `meta`: the codec's wire, the message without it.
  for (const i of quick.metaAt) sent[i] = stripMeta(sent[i]);
  const added = addedTokens(deps, input, quick, sent);
  if (!added) return undefined;
  const fixed = fixedTokens(deps, options);
  const breakdown = {
    system: fixed.system + quick.sums.system + added.system,
    developer: quick.sums.developer + added.developer,
    toolsSchema: fixed.toolsSchema,
    messages: deps.counter.requestOverhead + quick.sums.messages + added.messages,
  };
  const local = breakdown.system + breakdown.developer + breakdown.toolsSchema + breakdown.messages;
  const calibrated = deps.calibration.count(key, local, deps.counter.exact);
  const now = deps.clock();
  const last = deps.lastCalls.get(key);
  const lifetime = policy.cacheLifetimeMs;
  const decision = decide(calibrated.tokens, policy, input.maxContextTokens, {
    force: false,
    coldCache: last !== undefined && lifetime > 0 && now - last.at > lifetime,
    hardLimit: hardLimitOf(options),
    // As call-pace.ts reads a view of n messages under a state that kept none.
    pace: { trough: undefined, appended: policy.costTrigger ? n : 0 },
    price: deps.cachePrice,
  });
  if (decision.triggered) return undefined;
  if (last === undefined) deps.lastCalls.set(key, { at: now, count: 1 });
  else {
    last.at = now;
    last.count++;
  }
  deps.calibration.noteSent(key, local);
  deps.counts.finishAfter(key, () => warmAfter(deps, input, n, local));
  return {
    messages: sent as M[],
    applied: false,
    reason: decision.reason,
    tokensBefore: calibrated.tokens,
    tokensAfter: calibrated.tokens,
    budget: decision.budget,
    kept: { pinned: quick.pinned, recentTurns: 0, toolPairs: 0 },
    prunedCount: 0,
    version: 0,
    format: codec.format,
    levels: [],
    repairs: [],
  };
}

/**
 * The tokens of the messages after the record's, by role group; `undefined` when one of them
 * is not plain (see {@link plainNew}) or they do not pair among themselves (the record's
 * history had no open call: a warm call with an unanswered call would have repaired it).
 */
function addedTokens(deps: PipelineDeps, input: PreflightInput, quick: QuickRecord, sent: unknown[]) {
  const { messages, codec, policy } = input;
  const sums = { system: 0, developer: 0, messages: 0 };
  const added = messages.slice(quick.length);
  const tiny = new IndexedHistory();
  tiny.update(added, codec, deps.index);
  if (tiny.pairer.findings.length > 0 || tiny.pairer.openFindings().length > 0) return undefined;
  for (let k = 0; k < added.length; k++) {
    const entry = deps.index.entry(added[k], quick.length + k, codec);
    if (!plainNew(entry, policy, quick.pins)) return undefined;
    sent[quick.length + k] = entry.wire;
    entry.tokens ??= new WeakMap();
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
async function warmAfter(deps: PipelineDeps, input: PreflightInput, n: number, local: number): Promise<void> {
  const slice = new TimeSlice();
  await slice.pause();
  // The caller only appends to its array; what it held at the call is its first n messages.
  if (deps.histories.heldLength(input.key) !== 0 || input.messages.length < n) return;
  const call = { ...input, messages: input.messages.slice(0, n) };
  const known = deps.counts.read(input.key, input.codec.format);
  const { indexed, repairs } = await indexMessagesInSlices(deps, call, slice);
  const stored = await deps.store.get(input.key);
  const resumed = await resumeAndCount(deps, call, indexed, stored, { slice, known: await known }, false);
  if (repairs.length > 0 || (!resumed.bounded && resumed.counted.tokensBefore !== local))
    await deleteStoredCounts(deps.store, input.key);
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
  );
}
