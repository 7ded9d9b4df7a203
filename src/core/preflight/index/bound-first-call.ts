/**
 * The first call of a long history nobody has counted (issue 47): its trigger is decided from
 * a bound of every uncounted message's tokens (`TokenCounter.boundMessage`, from UTF-8 bytes,
 * never below the exact count) instead of tokenizing the history while the agent waits. A
 * bound under the trigger means the exact count is too, so the call sends exactly what an
 * exact count would send; a bound that may be over counts exactly at once, as before. After
 * a call decided from the bound, the exact counts and the session's exact view are made in
 * slices in the background, and the session's next call waits for them (without holding the
 * loop) before it starts.
 */
import type { Positional } from '../../chunked-list.js';
import type { TokenCounter } from '../../counting/token-counter.js';
import type { IndexedMessage } from '../../messages/message-index.js';
import type { SessionState } from '../../session/session-store.js';
import { runStepsYielding, TimeSlice } from '../../time-slice.js';
import { carryPinsSeen } from '../view/remember-protected.js';
import { buildViewSteps, type ViewContext } from '../view/resume-view.js';
import type { SessionView } from '../view/session-view.js';
import { countAhead } from './count-ahead.js';
import type { IndexedHistory } from './index-request.js';

/** Messages from which a first call decides from the bound (fewer are counted exactly in a few slices). */
export const BOUND_FROM = 1_000;

const bounds = new WeakMap<TokenCounter, TokenCounter>();

/**
 * A counter whose `countMessage` is `counter.boundMessage` (`undefined` when `counter` has
 * none): a view built with it sums bounds (and exact counts where known), and is never reused
 * by a call counting with `counter` (a view is bound to its counter).
 */
export function boundCounterOf(counter: TokenCounter): TokenCounter | undefined {
  const boundMessage = counter.boundMessage?.bind(counter);
  if (!boundMessage) return undefined;
  let bound = bounds.get(counter);
  if (!bound) {
    bound = {
      name: `bound(${counter.name})`,
      exact: false,
      countText: (text) => counter.countText(text),
      countMessage: boundMessage,
      countTools: (tools) => counter.countTools(tools),
      requestOverhead: counter.requestOverhead,
    };
    bounds.set(counter, bound);
  }
  return bound;
}

/**
 * Marks with the bound counter the messages whose exact count is known (counted before, or
 * stored with the session's state): the bounded view takes their exact count, and only the
 * others are bounded. Returns how many are not known.
 */
export async function shareKnownCounts(
  items: Positional<IndexedMessage>,
  counter: TokenCounter,
  bound: TokenCounter,
  known: ReadonlyMap<string, number> | undefined,
  slice: TimeSlice,
): Promise<number> {
  let unknown = 0;
  for (let i = 0; i < items.length; i++) {
    const entry = items.at(i)!.entry;
    const exact = entry.tokens?.get(counter) ?? known?.get(entry.hash);
    if (exact === undefined) unknown++;
    else {
      entry.tokens.set(bound, exact);
    }
    if ((i & 255) === 255 && slice.due()) await slice.pause();
  }
  return unknown;
}

/** What finishing a bounded call's counting needs. */
export interface FinishExactInput {
  /** The session's history as the call left it. */
  readonly history: IndexedHistory;
  /** The view the call sent (built with the bound counter). */
  readonly boundView: SessionView;
  /** The context of the exact view (the manager's own counter). */
  readonly context: ViewContext;
  readonly stored: SessionState | undefined;
  readonly known: ReadonlyMap<string, number> | undefined;
  /** False once the session's history was dropped or changed (ended, evicted). */
  readonly current: () => boolean;
}

/**
 * After the call: counts exactly every message the bounded view left uncounted, then builds
 * the session's exact view, both in slices; the view replaces the bounded one unless the
 * history moved on meanwhile. True when it did.
 */
export async function finishExact(input: FinishExactInput): Promise<boolean> {
  const { history, boundView, context } = input;
  const slice = new TimeSlice();
  // After the call: its answer is not held up by the counting.
  await slice.pause();
  const generation = history.generation;
  const still = () => input.current() && history.generation === generation && history.view === boundView;
  if (!still()) return false;
  await countAhead({ ...context, stored: input.stored, known: input.known }, slice);
  if (!still()) return false;
  // Under the bound view's state: the call may have written pins to it (remember-protected.ts),
  // and a view built under the state read before would be rebuilt whole by the next call.
  const view = await runStepsYielding(buildViewSteps({ ...context, state: boundView.state }), slice);
  if (!still()) return false;
  carryPinsSeen(boundView, view);
  history.view = view;
  return true;
}
