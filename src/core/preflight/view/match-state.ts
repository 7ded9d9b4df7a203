/**
 * Part of step 2: which of the session's stored states (if any) this history resumes. A state
 * holds for a history only when every message it covers is there, unchanged and in place:
 * its anchor (the prefix chain of the first messages it was made from, see
 * {@link HistoryAnchor}) matches the history's own chain, with at least one message after it;
 * or the history carries the state's summary message itself (a persisted view), trusted by
 * its mark or by being exactly the stored summary. Anything else that looks like a summary is
 * ordinary content; of several trusted ones, only the highest version (the last of equal
 * ones) is the current summary, the others are content. A message that holds the signed
 * summary and other text resumes the summary; the other text is content (see
 * content-around-summary.ts). The stored record holds the newest state and a few earlier ones
 * (`branches`): a rewind resumes an ancestor that still holds, a fork alternating under one id
 * resumes its own branch, another conversation resumes nothing.
 */
import type { Positional } from '../../chunked-list.js';
import type { EventBus, OperationContext } from '../../events/event-bus.js';
import { isExactSummaryText, summaryBody } from '../../messages/message.js';
import type { IndexedMessage } from '../../messages/message-index.js';
import type { SessionState } from '../../session/session-store.js';
import { runSteps, type Steps } from '../../time-slice.js';
import type { IndexedHistory } from '../index/index-request.js';

/**
 * A summary message's version and body when it can be trusted for this session; `signed` is
 * the signed summary alone when the message holds other text too (that text is content).
 */
export type TrustSummary = (
  item: IndexedMessage,
) => { version: number; body: string; signed?: string } | undefined;

/** What {@link matchState} found. */
export interface StateMatch {
  /** The state the history resumes; `undefined` when none holds. */
  readonly state: SessionState | undefined;
  /** The trusted summary message of a persisted view, resumed. */
  readonly summaryItem: IndexedMessage | undefined;
  /**
   * Its signed summary text when the message holds other text too (a framework merged the
   * summary with the next turn): the summary is sent alone, the rest as the caller's content.
   */
  readonly signed?: string;
  /** The trusted summary's body. */
  readonly summaryBody?: string;
  /** The version the next summary of this session takes (versions only grow, across branches). */
  readonly nextVersion: number;
  /** Set when the session has stored states and none holds for this history. */
  readonly divergence: { reason: 'shorter' | 'diverged'; storedVersion: number } | undefined;
}

/** The stored states of a record, newest first. */
export function statesOf(record: SessionState | undefined): SessionState[] {
  return record ? [record, ...(record.branches ?? [])] : [];
}

/** True when the state's anchor holds for `history` (at least one message after it). */
function anchorHolds(history: IndexedHistory, state: SessionState): boolean {
  const anchor = state.anchor;
  if (anchor === undefined) return legacyHolds(history, state);
  if (anchor.length === 0) return true;
  return history.length > anchor.length && history.chainAt(anchor.length - 1) === anchor.chain;
}

/**
 * A state written before anchors existed: it holds when the history shares a message with
 * what it covered or kept (the rule of that time), or when it covers nothing.
 */
function legacyHolds(history: IndexedHistory, state: SessionState): boolean {
  const ids = [...state.coveredIds, ...(state.keptIds ?? [])];
  if (ids.length === 0) return true;
  const known = new Set(ids);
  for (const item of history.items) if (known.has(item.id)) return true;
  return false;
}

/** The state whose summary is exactly `version` and `body`, if stored. */
function stateWithSummary(states: readonly SessionState[], version: number, body: string) {
  return states.find((state) => state.version === version && state.summary?.text === body);
}

/** Messages looked at between two pauses of {@link trustedSummarySteps}. */
const SUMMARY_STEP = 4_096;

/** The trusted summary messages of the history, in order; a pause every {@link SUMMARY_STEP} messages. */
function* trustedSummarySteps(
  items: Positional<IndexedMessage>,
  states: readonly SessionState[],
  trust: TrustSummary,
): Steps<{ item: IndexedMessage; version: number; body: string; signed?: string }[]> {
  const found: { item: IndexedMessage; version: number; body: string; signed?: string }[] = [];
  for (let i = 0; i < items.length; i++) {
    if (i % SUMMARY_STEP === SUMMARY_STEP - 1) yield;
    const item = items.at(i)!;
    if (item.entry.summaryVersion === undefined) continue;
    const marked = trust(item);
    if (marked) {
      found.push({ item, ...marked });
      continue;
    }
    // A summary written before marks existed is trusted when it is exactly a stored one.
    const version = item.entry.summaryVersion;
    const text = item.entry.parsed.text;
    if (!isExactSummaryText(text)) continue;
    const body = summaryBody(text);
    if (stateWithSummary(states, version, body)) found.push({ item, version, body });
  }
  return found;
}

/**
 * The session's current summary among the trusted ones of a history: the highest version,
 * the last of equal ones. Every other genuine summary (an older version replayed after it, an
 * earlier one the caller kept) is the caller's content: sent where it stands, never in place
 * of the current one.
 */
function currentSummary<T extends { version: number }>(summaries: readonly T[]): T | undefined {
  let current: T | undefined;
  for (const summary of summaries) if (!current || summary.version >= current.version) current = summary;
  return current;
}

/** Picks the state `history` resumes among the record's states (see the file's comment). */
export function matchState(
  history: IndexedHistory,
  record: SessionState | undefined,
  trust: TrustSummary,
): StateMatch {
  return runSteps(matchStateSteps(history, record, trust));
}

/** {@link matchState} as steps: the look for summary messages pauses every few thousand messages. */
export function* matchStateSteps(
  history: IndexedHistory,
  record: SessionState | undefined,
  trust: TrustSummary,
): Steps<StateMatch> {
  const states = statesOf(record);
  const newest = currentSummary(yield* trustedSummarySteps(history.items, states, trust));
  let nextVersion = (newest?.version ?? 0) + 1;
  for (const state of states) nextVersion = Math.max(nextVersion, state.version + 1);
  let best: SessionState | undefined;
  for (const state of states) {
    if (!anchorHolds(history, state)) continue;
    const length = state.anchor?.length ?? 0;
    if (!best || length > (best.anchor?.length ?? 0)) best = state;
  }
  const bestLength = best?.anchor?.length ?? 0;
  if (newest && newest.item.index >= bestLength) {
    const state = stateWithSummary(states, newest.version, newest.body) ?? resumedState(history, newest);
    return {
      state,
      summaryItem: newest.item,
      ...(newest.signed === undefined ? {} : { signed: newest.signed }),
      summaryBody: newest.body,
      nextVersion,
      divergence: undefined,
    };
  }
  // The newest state does not hold: said once, whatever older state is resumed instead.
  const divergence = record && best !== record ? divergenceOf(history, record) : undefined;
  if (best) return { state: best, summaryItem: undefined, nextVersion, divergence };
  return { state: undefined, summaryItem: undefined, nextVersion, divergence };
}

/**
 * How a history parts from the session's newest state, when that state holds something (a
 * summary or coverage) the history's own messages do not back.
 */
function divergenceOf(history: IndexedHistory, record: SessionState): StateMatch['divergence'] {
  if (record.summary === undefined && record.coveredIds.length === 0) return undefined;
  const shorter = record.anchor !== undefined && history.length <= record.anchor.length;
  return { reason: shorter ? 'shorter' : 'diverged', storedVersion: record.version };
}

/**
 * The state of a persisted view whose summary is trusted but not stored (a restart with a
 * memory store, another process without a shared store): the summary, and the messages
 * before it kept verbatim as the user's text (they compete again at the next compaction).
 */
function resumedState(
  history: IndexedHistory,
  summary: { item: IndexedMessage; version: number; body: string },
): SessionState {
  const state: SessionState = {
    sessionId: '',
    version: summary.version,
    summary: { text: summary.body, tokens: 0, summarizer: 'resumed', createdAt: 0 },
    coveredIds: [],
    updatedAt: 0,
  };
  const userText: string[] = [];
  for (let i = 0; i < summary.item.index; i++) {
    const item = history.items.at(i)!;
    if (item.entry.summaryVersion === undefined) userText.push(item.id);
  }
  if (userText.length > 0) state.userTextIds = userText;
  return state;
}

/**
 * The one event of a history that parts from the session's newest state (a rewind, an edit of
 * a covered message, another conversation or branch): what is sent instead. `divergedAt` is the
 * first position that differs from the session's previous call.
 */
export function emitDivergence(
  bus: EventBus,
  context: OperationContext,
  history: IndexedHistory,
  divergence: NonNullable<StateMatch['divergence']>,
): void {
  const at = Math.min(history.changedFrom, history.length);
  const session = `session "${context.sessionId}"`;
  bus.emit(
    context,
    'compact.warning',
    {
      code: 'history_diverged',
      message:
        divergence.reason === 'shorter'
          ? `${session}: the history was cut back before what summary v${divergence.storedVersion} covers (a rewind or an edit): the summary is not sent; the history is compacted as given`
          : `${session}: the history parts from what summary v${divergence.storedVersion} covers (an edit, a fork or another conversation under this id): the summary is not sent; the history is compacted as given`,
      context: { reason: divergence.reason, divergedAt: at, storedVersion: divergence.storedVersion },
    },
    { start: Date.now() },
  );
}
