/**
 * The quick record of a session that compacted (issue 47 point 1): what a warm call sent of a
 * history whose older part the summary covers, as a layout over the history's positions, so
 * that a fresh process answers its first call without indexing (hashing, matching, counting)
 * the covered part. The layout is the request in order: runs of the caller's messages sent as
 * given (their `meta` stripped), the rewritten ones as sent (a cleared tool result's
 * placeholder, a shortened call), and where the summary message goes (rebuilt from the stored
 * state on the call: the state's summary is not copied), stored as flat lists (`PackedLayout`:
 * no array per run to parse, no loop of its own to check). The record holds under the stored
 * state it was made from (its stamp); the history is vouched for by the print of a sample of
 * its positions (quick-print.ts), covered part included, and, after the call, by the exact
 * count of a full resume (quick-resume.ts), which drops the record when it differs.
 */
import { listLength } from '../../session/packed-state.js';
import type { SessionState } from '../../session/session-store.js';
import type { CompactedLayout, PackedLayout } from '../../store/stored-counts.js';
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
 * meanwhile, its request does not read as its entries in order around one summary, or their
 * positions do not increase. Written packed ({@link PackedLayout}).
 */
export async function buildLayout(
  snapshot: LayoutSnapshot,
  slice: TimeSlice,
): Promise<{ layout: CompactedLayout; metaAt: number[] } | undefined> {
  const { view, cache, state } = snapshot;
  const newestKept = state.keptIds?.at(-1);
  const packed: PackedLayout = { v: 1, spans: [], at: [], wires: [] };
  const { spans } = packed;
  const metaAt: number[] = [];
  let summaryAt = -1;
  let after = 0;
  let found = false;
  let k = 0;
  let next = 0;
  let split = false;
  for (let w = 0; w < snapshot.wires; w++) {
    if ((w & 255) === 255 && slice.due()) {
      await slice.pause();
      if (view.assembled !== cache) return undefined;
    }
    const wire = cache.wires[w];
    if (wire === cache.summaryWire && summaryAt < 0) {
      summaryAt = w;
      // A span never holds the summary: it goes between two spans.
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
    const i = entry.item.index;
    if (i < next) return undefined;
    next = i + 1;
    if (entry.rewrite !== undefined || wire !== given.wire) {
      packed.at.push(i);
      packed.wires.push(wire);
    } else if (wire !== given.parsed.raw) metaAt.push(i);
    if (!split && spans.at(-1) === i) spans[spans.length - 1] = i + 1;
    else spans.push(i, i + 1);
    split = false;
  }
  if (k !== snapshot.entries || (cache.summaryWire !== undefined) !== summaryAt >= 0) return undefined;
  const layout: CompactedLayout = {
    stamp: stampOf(state),
    summaryAt,
    summaryTokens: snapshot.summaryTokens,
    packed,
    entries: k,
    paceAfter: after,
    paceFound: found,
  };
  return { layout, metaAt };
}

/**
 * True when `value` reads as a stored layout (a record from another version or hand-edited is
 * dropped). A packed one's positions are checked as its request is built ({@link layoutRequest}),
 * not in a loop of their own: a fresh process runs each loop uncompiled.
 */
export function isLayout(value: unknown, length: number): value is CompactedLayout {
  if (typeof value !== 'object' || value === null) return false;
  const layout = value as CompactedLayout;
  const ints = [layout.summaryAt + 1, layout.summaryTokens, layout.entries, layout.paceAfter];
  if (!ints.every((n) => Number.isSafeInteger(n) && n >= 0)) return false;
  if (typeof layout.stamp !== 'string' || typeof layout.paceFound !== 'boolean') return false;
  // A record with parts (written before the packed form) is read by them, as it always was.
  if (layout.parts !== undefined) return partsHold(layout.parts, length);
  const packed = layout.packed as Partial<PackedLayout> | undefined;
  if (typeof packed !== 'object' || packed === null || packed.v !== 1) return false;
  const { spans, at, wires } = packed;
  return (
    Array.isArray(spans) &&
    spans.length % 2 === 0 &&
    Array.isArray(at) &&
    Array.isArray(wires) &&
    at.length === wires.length
  );
}

/** The parts of a layout written before the packed form: runs in order within `length`, messages as sent. */
function partsHold(parts: unknown, length: number): boolean {
  if (!Array.isArray(parts)) return false;
  let previous = 0;
  for (const part of parts) {
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

/** The caller's side of a layout's request: its messages, the record's length of them, and those sent without `meta`. */
export interface LayoutHistory {
  readonly messages: readonly unknown[];
  /** The record's history length (the messages after it are new: not the layout's). */
  readonly length: number;
  readonly metaAt: readonly number[];
  readonly strip: (message: unknown) => unknown;
}

/**
 * The request a warm call sent of the record's history (`messages`: the caller's; the ones at
 * `metaAt` sent without their `meta`, `strip`), the summary message at its place (between two
 * parts: a layout always has one after it, see {@link layoutEligible}); `undefined` when a
 * packed layout's positions do not read as its request (see {@link packedRequest}). Built from
 * slices of the history joined by `concat`: built-ins, quick in a fresh process whose loops are
 * not compiled yet (a loop over every sent message was most of the call there).
 */
export function layoutRequest(
  layout: CompactedLayout,
  history: LayoutHistory,
  summaryWire: unknown,
): unknown[] | undefined {
  if (layout.parts !== undefined) return partsRequest(layout, layout.parts, history, summaryWire);
  return layout.packed === undefined ? undefined : packedRequest(layout, layout.packed, history, summaryWire);
}

/** As a set of positions would read a stored list: only whole positions match, in order. */
function sortedPositions(metaAt: readonly number[]): number[] {
  return (Array.isArray(metaAt) ? metaAt.filter(Number.isSafeInteger) : []).sort((a, b) => a - b);
}

/** {@link layoutRequest} of a layout written as parts. */
function partsRequest(
  layout: CompactedLayout,
  parts: NonNullable<CompactedLayout['parts']>,
  history: LayoutHistory,
  summaryWire: unknown,
): unknown[] {
  const { messages, strip } = history;
  const stripped = sortedPositions(history.metaAt);
  const pieces: unknown[][] = [];
  let length = 0;
  let m = 0;
  for (const part of parts) {
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

/**
 * {@link layoutRequest} of a packed layout: a slice of the caller's messages per span, its
 * rewritten and stripped positions set in it. `undefined` when a span is not whole positions
 * increasing within the record's history, a rewrite's position is not inside its span or not
 * after the one before, or the request does not come out as the layout's view and summary.
 */
function packedRequest(
  layout: CompactedLayout,
  packed: PackedLayout,
  history: LayoutHistory,
  summaryWire: unknown,
): unknown[] | undefined {
  const { messages, strip } = history;
  const { spans, at, wires } = packed;
  const stripped = sortedPositions(history.metaAt);
  const pieces: unknown[][] = [];
  let sent = 0;
  let next = 0;
  let nextAt = 0;
  let k = 0;
  let m = 0;
  for (let s = 0; s < spans.length; s += 2) {
    if (sent === layout.summaryAt) {
      pieces.push([summaryWire]);
      sent++;
    }
    const from = spans[s]!;
    const to = spans[s + 1]!;
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) return undefined;
    if (from < next || to <= from || to > history.length) return undefined;
    next = to;
    const piece = messages.slice(from, to);
    for (; m < stripped.length && stripped[m]! < to; m++)
      if (stripped[m]! >= from) piece[stripped[m]! - from] = strip(messages[stripped[m]!]);
    for (; k < at.length && at[k]! < to; k++) {
      const i = at[k]!;
      if (!Number.isSafeInteger(i) || i < from || i < nextAt) return undefined;
      nextAt = i + 1;
      piece[i - from] = wires[k];
    }
    pieces.push(piece);
    sent += to - from;
  }
  // Every rewrite placed, and the view's messages and the summary all sent.
  if (k !== at.length || sent !== layout.entries + (layout.summaryAt >= 0 ? 1 : 0)) return undefined;
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
