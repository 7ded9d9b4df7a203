/**
 * The last guard where a request leaves the manager (issue 43): the cheap parts of the one
 * invariant, checked on what the call changed. The newest message of the given history goes
 * last, exactly as given (one identity comparison: the warm path costs nothing more), unless
 * it alone keeps the request over its budget (level d cuts it then, its marker naming the
 * archived text). A call
 * that compacted (it rewrote the request, O(history) already) is also checked for tool pairing
 * in the provider's order and for at most one summary. A request that breaks a rule is not
 * sent: one `compact.error` (`unsound_request`) names what broke and the step that made it, and
 * a sound request goes instead, built from the given history without the faulty step.
 */
import type { IndexedMessage } from '../../messages/message-index.js';
import type { SessionRewrite } from '../../session/session-store.js';
import { runSteps, type Steps } from '../../time-slice.js';
import type { PipelineDeps, PreparedRequest } from '../prepare-request.js';
import type { ViewEntry } from '../view/session-view.js';
import { assemble } from './assemble.js';

/** The rule a request broke. */
export type UnsoundRule = 'newest_message' | 'tool_pairing' | 'summary';

/** What broke, and which step of the preflight produced it. */
export interface RequestFault {
  rule: UnsoundRule;
  message: string;
  /** The cascade level or step: `clear_tool_results`, `summarize`, `assemble`, ... */
  step: string;
}

/** The cascade level that makes a rewrite of this kind. */
function levelOf(rewrite: SessionRewrite): string {
  return rewrite.kind === 'cleared'
    ? 'clear_tool_results'
    : rewrite.kind === 'shortened'
      ? 'shorten_arguments'
      : 'cut_oversized';
}

/** The newest message of the given history (after repairs), if any. */
function newestItem(prepared: PreparedRequest): IndexedMessage | undefined {
  const items = prepared.indexed.items;
  return items.at(items.length - 1);
}

/**
 * O(1): the request ends with the newest given message as given. `entries` are the view's
 * (to name the step that rewrote or dropped it).
 */
export function newestFault(
  messages: readonly unknown[],
  prepared: PreparedRequest,
  entries: readonly ViewEntry[],
  oversized?: (entry: ViewEntry) => boolean,
): RequestFault | undefined {
  const newest = newestItem(prepared);
  if (!newest || messages.at(-1) === newest.entry.wire) return undefined;
  const entry = entries.at(-1);
  // The last resort of level d: a newest message the request cannot hold whole goes cut head
  // and tail (its marker names the archived text), not as given.
  if (entry?.item === newest && entry.rewrite?.kind === 'cut' && oversized?.(entry)) return undefined;
  const where = `the newest message (#${newest.index})`;
  if (entry?.item === newest && entry.rewrite)
    return {
      rule: 'newest_message',
      message: `${where} was sent ${entry.rewrite.kind}`,
      step: levelOf(entry.rewrite),
    };
  return { rule: 'newest_message', message: `${where} is not the request's last message`, step: 'assemble' };
}

const SUMMARY = Symbol('summary');

/**
 * O(entries), for a call that compacted: every tool call answered right after it (the results
 * following its call message; consecutive call items share one answer run), no result without an
 * open call, and at most one trusted summary.
 */
export function compactionFault(
  entries: readonly ViewEntry[],
  summaryWire: unknown,
  folded: ReadonlySet<string>,
  format: PreparedRequest['codec']['format'],
  trustedSummary: IndexedMessage | undefined,
): RequestFault | undefined {
  return runSteps(compactionFaultSteps(entries, summaryWire, folded, format, trustedSummary));
}

/** Entries looked at between two chances to pause in {@link compactionFaultSteps}. */
const STEP_ENTRIES = 1_024;

/**
 * {@link compactionFault} as steps that yield every {@link STEP_ENTRIES} entries, so that a
 * long view's guard runs in slices (`runStepsYielding`).
 */
export function* compactionFaultSteps(
  entries: readonly ViewEntry[],
  summaryWire: unknown,
  folded: ReadonlySet<string>,
  format: PreparedRequest['codec']['format'],
  trustedSummary: IndexedMessage | undefined,
): Steps<RequestFault | undefined> {
  // The request's order, as assemble builds it, over the entries themselves (not copies of
  // them with the entry as wire: one object per entry alive through the slices below).
  const order = assemble<ViewEntry | typeof SUMMARY>(
    entries,
    summaryWire === undefined ? undefined : SUMMARY,
    format,
    (entry) => entry,
  );
  yield;
  let seen = 0;
  const step = (callId: string) => (folded.has(callId) ? 'summarize' : 'assemble');
  const open = new Set<string>();
  let previousCalls = false;
  let summaries = 0;
  for (const item of order) {
    // The manager's summary, and a trusted one the history carries (a tag the manager does not
    // trust is the caller's content).
    // (An entry with `content` is a message the summary was taken out of: content.)
    if (item === SUMMARY || (item.item === trustedSummary && !item.content)) summaries++;
    const parsed = item === SUMMARY ? undefined : item.item.entry.parsed;
    const calls = parsed?.toolCalls ?? [];
    const results = parsed?.toolResults ?? [];
    for (const result of results) {
      if (!open.delete(result.callId))
        return {
          rule: 'tool_pairing',
          message: `tool result "${result.callId}" has no open call before it`,
          step: step(result.callId),
        };
    }
    if (results.length === 0 && open.size > 0 && !(calls.length > 0 && previousCalls)) {
      const id = [...open][0]!;
      return { rule: 'tool_pairing', message: `tool call "${id}" has no result after it`, step: step(id) };
    }
    for (const call of calls) open.add(call.id);
    previousCalls = calls.length > 0 && results.length === 0;
    if (++seen % STEP_ENTRIES === 0) yield;
  }
  if (summaries > 1)
    return { rule: 'summary', message: `the request carries ${summaries} summaries`, step: 'summarize' };
  return undefined;
}

/** The call ids of the folded messages (their pairing breaks come from the summary level). */
export function foldedCallIds(folded: readonly IndexedMessage[]): Set<string> {
  return runSteps(foldedCallIdsSteps(folded));
}

/**
 * {@link foldedCallIds} as steps, one every {@link STEP_ENTRIES} messages (16k folded messages
 * read at once were most of a 20 ms block, issue 47).
 */
export function* foldedCallIdsSteps(folded: readonly IndexedMessage[]): Steps<Set<string>> {
  const ids = new Set<string>();
  for (let k = 0; k < folded.length; k++) {
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    const { parsed } = folded[k]!.entry;
    for (const call of parsed.toolCalls) ids.add(call.id);
    for (const result of parsed.toolResults) ids.add(result.callId);
  }
  return ids;
}

/** The call ids of `folded`, then {@link compactionFaultSteps} with them. */
export function* guardSteps(
  entries: readonly ViewEntry[],
  summaryWire: unknown,
  folded: readonly IndexedMessage[],
  format: PreparedRequest['codec']['format'],
  trustedSummary: IndexedMessage | undefined,
): Steps<RequestFault | undefined> {
  const ids = yield* foldedCallIdsSteps(folded);
  return yield* compactionFaultSteps(entries, summaryWire, ids, format, trustedSummary);
}

/** Emits the one `compact.error` of an unsound request, naming the fault and what went instead. */
export function reportUnsound(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  fault: RequestFault,
  fallback: string,
): void {
  deps.bus.emit(
    prepared.context,
    'compact.error',
    {
      errorType: 'unsound_request',
      message: `unsound request not sent: ${fault.message} (step: ${fault.step})`,
      fallback,
      context: { rule: fault.rule, step: fault.step },
    },
    { start: Date.now(), ...(prepared.decisionSpanId ? { parentId: prepared.decisionSpanId } : {}) },
  );
}

/**
 * The request with the newest message as given, when only that broke: the faulty step's
 * rewrite of it dropped. `undefined` when the newest is not the last entry (then the caller
 * falls back to the given history).
 */
export function withNewestAsGiven(
  messages: readonly unknown[],
  prepared: PreparedRequest,
  entries: readonly ViewEntry[],
): unknown[] | undefined {
  const newest = newestItem(prepared);
  if (!newest || entries.at(-1)?.item !== newest || messages.length === 0) return undefined;
  const out = messages.slice();
  out[out.length - 1] = newest.entry.wire;
  return out;
}
