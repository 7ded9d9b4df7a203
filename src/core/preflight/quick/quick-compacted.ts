/**
 * The quick record of a session that compacted (issue 47 point 1): what a warm call sent of a
 * history whose older part the summary covers, as a layout over the history's positions, so
 * that a fresh process answers its first call without indexing (hashing, matching, counting)
 * the covered part. The layout is the request in order: runs of the caller's messages sent as
 * given (their `meta` stripped), the rewritten ones as sent (a cleared tool result's
 * placeholder, a shortened call), and where the summary message goes (rebuilt from the stored
 * state on the call: the state's summary is not copied). The record holds under the stored
 * state it was made from (its stamp); the history is vouched for by the print of a sample of
 * its positions (quick-print.ts), covered part included, and, after the call, by the exact
 * count of a full resume (quick-resume.ts), which drops the record when it differs.
 */
import { listLength } from '../../session/packed-state.js';
import type { SessionState } from '../../session/session-store.js';
import type { CompactedLayout } from '../../session/stored-counts.js';
import type { TimeSlice } from '../../time-slice.js';
import type { AssembledCache, SessionView } from '../view/session-view.js';

/** The stored state a layout was made under, as compared on a fresh call. */
export function stampOf(state: SessionState): string {
  return [
    state.version,
    state.updatedAt,
    // Counted without reading a list read from the store (packed-state.ts): a fresh call reads none.
    listLength(state, 'coveredIds'),
    listLength(state, 'keptIds'),
    state.summary?.text.length ?? -1,
  ].join('|');
}

/**
 * A compacted view a layout can stand for: it resumes the stored state itself (not a branch,
 * not a local state, no summary sent back in the history, no provider boundary), with its
 * request assembled and extendable by appending (as the next warm call extends it), the
 * newest of the `length` messages last as given (what the request guard sends as it stands).
 */
export function layoutEligible(view: SessionView, state: SessionState | undefined, length: number): boolean {
  if (state === undefined || state.local || state.version === 0 || view.matched !== state) return false;
  if (view.version !== state.version || view.mismatch || view.summaryItem !== undefined) return false;
  if (view.previousSummary !== state.summary?.text) return false;
  const cache = view.assembled;
  if (cache === undefined || cache.count !== view.entries.length) return false;
  // The newest message last, as given: the request guard let the view's request go out.
  const newest = view.entries.at(-1)?.item;
  if (newest?.index !== length - 1 || cache.wires.at(-1) !== newest.entry.wire) return false;
  const summary = state.summary !== undefined;
  return (cache.summaryWire !== undefined) === summary && (!summary || cache.wires.length > cache.head + 1);
}

/** A layout to build after the call: the view and its request as they stood at the call. */
export interface LayoutSnapshot {
  readonly view: SessionView;
  readonly cache: AssembledCache;
  /** Entries and request messages at the call (later calls only append to both). */
  readonly entries: number;
  readonly wires: number;
  readonly state: SessionState;
  readonly summaryTokens: number;
}

/** Takes a {@link LayoutSnapshot} of an eligible view (see {@link layoutEligible}). */
export function snapshotOf(view: SessionView, state: SessionState, summaryTokens: number): LayoutSnapshot {
  const cache = view.assembled!;
  return { view, cache, entries: cache.count, wires: cache.wires.length, state, summaryTokens };
}

/**
 * The layout of a snapshot, in slices (the kept tail can hold thousands of messages), with the
 * positions of the messages sent without their `meta`; `undefined` when the view was rebuilt
 * meanwhile or its request does not read as its entries in order around one summary.
 */
export async function buildLayout(
  snapshot: LayoutSnapshot,
  slice: TimeSlice,
): Promise<{ layout: CompactedLayout; metaAt: number[] } | undefined> {
  const { view, cache, state } = snapshot;
  const newestKept = state.keptIds?.at(-1);
  const parts: CompactedLayout['parts'] = [];
  const metaAt: number[] = [];
  let summaryAt = -1;
  let after = 0;
  let found = false;
  let k = 0;
  let split = false;
  for (let w = 0; w < snapshot.wires; w++) {
    if ((w & 255) === 255 && slice.due()) {
      await slice.pause();
      if (view.assembled !== cache) return undefined;
    }
    const wire = cache.wires[w];
    if (wire === cache.summaryWire && summaryAt < 0) {
      summaryAt = w;
      // A run never spans the summary: it goes between two parts.
      split = true;
      continue;
    }
    const entry = view.entries[k++];
    if (entry === undefined || entry.wire !== wire || entry.beforeBoundary || entry.content) return undefined;
    // The pace of the cost trigger (call-pace.ts): messages after the newest kept one.
    if (newestKept !== undefined && entry.item.id === newestKept) {
      after = 0;
      found = true;
    } else after++;
    const given = entry.item.entry;
    if (entry.rewrite !== undefined || wire !== given.wire) {
      parts.push({ wire });
      split = false;
      continue;
    }
    const i = entry.item.index;
    if (wire !== given.parsed.raw) metaAt.push(i);
    const last = parts.at(-1);
    if (!split && Array.isArray(last) && last[1] === i) last[1] = i + 1;
    else parts.push([i, i + 1]);
    split = false;
  }
  if (k !== snapshot.entries || (cache.summaryWire !== undefined) !== summaryAt >= 0) return undefined;
  const layout: CompactedLayout = {
    stamp: stampOf(state),
    summaryAt,
    summaryTokens: snapshot.summaryTokens,
    parts,
    entries: k,
    paceAfter: after,
    paceFound: found,
  };
  return { layout, metaAt };
}

/** True when `value` reads as a stored layout (a record from another version or hand-edited is dropped). */
export function isLayout(value: unknown, length: number): value is CompactedLayout {
  if (typeof value !== 'object' || value === null) return false;
  const layout = value as CompactedLayout;
  const ints = [layout.summaryAt + 1, layout.summaryTokens, layout.entries, layout.paceAfter];
  if (!ints.every((n) => Number.isSafeInteger(n) && n >= 0)) return false;
  if (typeof layout.stamp !== 'string' || typeof layout.paceFound !== 'boolean') return false;
  if (!Array.isArray(layout.parts)) return false;
  let previous = 0;
  for (const part of layout.parts) {
    if (Array.isArray(part)) {
      const [from, to] = part as unknown[];
      if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) return false;
      if ((from as number) < previous || (to as number) <= (from as number) || (to as number) > length)
        return false;
      previous = to as number;
    } else if (typeof part !== 'object' || part === null || !('wire' in part)) return false;
  }
  return true;
}

/**
 * The request a warm call sent of the record's history (`messages`: the caller's; the ones at
 * `metaAt` sent without their `meta`, `strip`), the summary message at its place (between two
 * parts: a layout always has one after it, see {@link layoutEligible}). Built from slices of
 * the history joined by `concat`: built-ins, quick in a fresh process whose loops are not
 * compiled yet (a loop over every sent message was most of the call there).
 */
export function layoutRequest(
  layout: CompactedLayout,
  messages: readonly unknown[],
  metaAt: readonly number[],
  strip: (message: unknown) => unknown,
  summaryWire: unknown,
): unknown[] {
  // As a set of positions would read a stored list: only whole positions match.
  const stripped = (Array.isArray(metaAt) ? metaAt.filter(Number.isSafeInteger) : []).sort((a, b) => a - b);
  const pieces: unknown[][] = [];
  let length = 0;
  let m = 0;
  for (const part of layout.parts) {
    if (length === layout.summaryAt) {
      pieces.push([summaryWire]);
      length++;
    }
    if (!Array.isArray(part)) {
      pieces.push([part.wire]);
      length++;
      continue;
    }
    const to = part[1];
    let from = part[0];
    length += to - from;
    for (; m < stripped.length && stripped[m]! < to; m++) {
      const i = stripped[m]!;
      if (i < from) continue;
      if (i > from) pieces.push(messages.slice(from, i));
      pieces.push([strip(messages[i])]);
      from = i + 1;
    }
    if (to > from) pieces.push(messages.slice(from, to));
  }
  return joined(pieces);
}

/** Arguments per `concat` call: well under the engine's limit on a call's arguments. */
const JOIN_ARGS = 8_192;

/**
 * `pieces.flat()`, by `concat` (a built-in with a fast path for plain arrays: in a fresh process
 * about 10x quicker than `flat()` on thousands of short pieces), in groups of {@link JOIN_ARGS}.
 */
function joined(pieces: unknown[][]): unknown[] {
  if (pieces.length <= JOIN_ARGS) return ([] as unknown[]).concat(...pieces);
  const groups: unknown[][] = [];
  for (let i = 0; i < pieces.length; i += JOIN_ARGS)
    groups.push(([] as unknown[]).concat(...pieces.slice(i, i + JOIN_ARGS)));
  return joined(groups);
}
