/**
 * Part of step 2: protected messages (`meta.protected`) remembered in the session's state, so
 * that a persisted view (meta stripped) keeps them pinned. Looks only at the view entries
 * added since its last look, so a warm call costs nothing here. The view takes the state it
 * writes: it is the view a rebuild under that state gives (the messages were pinned already),
 * so the next call extends it instead of rebuilding it whole (issue 47: a 100k-message view
 * rebuilt in one block of about 0.9 s after the first call that remembered a pin).
 */
import { onProcessCachesRelease } from '../../process-caches.js';
import type { SessionState, SessionStore } from '../../session/session-store.js';
import { adoptState } from './resume-view.js';
import type { SessionView } from './session-view.js';

/**
 * How many entries of a view {@link rememberProtected} has looked at (a view only grows).
 * Replaced when the last manager shuts down, as call-pace.ts's table (room for the views held).
 */
let pinsSeen = new WeakMap<SessionView, number>();
onProcessCachesRelease(() => {
  pinsSeen = new WeakMap();
});

/** How long the lock taken to remember pins may be held. */
const PIN_LOCK_TTL_MS = 5_000;

/**
 * Marks every entry of `view` as looked at: a compaction's view, whose pinned messages its
 * state already protects (so the next call does not look at the whole view again).
 */
export function pinsAllSeen(view: SessionView): void {
  pinsSeen.set(view, view.entries.length);
}

/**
 * Carries what {@link rememberProtected} saw of `from` over to `to`, a view of the same
 * history built anew under the same state (the exact view that replaces a bound one).
 */
export function carryPinsSeen(from: SessionView, to: SessionView): void {
  const seen = pinsSeen.get(from);
  if (seen !== undefined && seen === from.entries.length && to.entries.length === seen)
    pinsSeen.set(to, seen);
}

/**
 * Remembers newly protected messages in the state, so a persisted view (meta stripped) keeps
 * them pinned. Pins do not move the version, so they are written under the session's lock
 * (a compaction holds it while it writes, and merges the stored pins), re-read and merged
 * with the pins stored meanwhile. When the lock is busy, the pins are written by a later call
 * (the messages still carry their `meta` until then).
 */
export function rememberProtected(
  store: SessionStore,
  key: string,
  view: SessionView,
  state: SessionState | undefined,
): SessionState | undefined | Promise<SessionState | undefined> {
  const known = view.pinnedIds;
  const added: string[] = [];
  // Only the entries added since the last look (a pin not yet written is looked at again).
  const entries = view.entries;
  for (let k = pinsSeen.get(view) ?? 0; k < entries.length; k++) {
    const entry = entries[k]!;
    if (entry.pinned && entry.item.entry.parsed.meta !== undefined && !known.has(entry.item.id))
      added.push(entry.item.id);
  }
  // Nothing new to remember (a warm call's usual case): answered without a promise.
  if (added.length === 0) {
    pinsSeen.set(view, entries.length);
    return state;
  }
  return writePins(store, key, view, state, added);
}

/** Writes the pins {@link rememberProtected} found, under the session's lock. */
async function writePins(
  store: SessionStore,
  key: string,
  view: SessionView,
  state: SessionState | undefined,
  added: readonly string[],
): Promise<SessionState | undefined> {
  const entries = view.entries;
  const lock = await store.acquireLock(key, PIN_LOCK_TTL_MS).catch(() => undefined);
  if (!lock) return state;
  try {
    const current = await store.get(key);
    // A compaction landed since the view was read: the next call sees its state.
    if ((current?.version ?? 0) !== (state?.version ?? 0)) return state;
    const base: SessionState = current ?? {
      sessionId: key,
      version: 0,
      coveredIds: [],
      updatedAt: Date.now(),
    };
    const pins = new Set(base.pinnedIds ?? []);
    for (const id of added) pins.add(id);
    const updated: SessionState = { ...base, pinnedIds: [...pins], updatedAt: Date.now() };
    const written = await store.set(key, updated, {
      expectedVersion: base.version,
      fencingToken: lock.token,
    });
    if (!written) return state;
    pinsSeen.set(view, entries.length);
    adoptPins(view, updated, added);
    return updated;
  } finally {
    await lock.release().catch(() => false);
  }
}

/**
 * Makes `view` hold `written`, the state it was built under with `added` (ids of messages the
 * view pins already) remembered: the view a rebuild under `written` gives, so it stays
 * reusable. When `written` also holds pins stored by another process that the view does not
 * pin, the view is left as it was (the next call rebuilds it under them).
 */
function adoptPins(view: SessionView, written: SessionState, added: readonly string[]): void {
  const remembered = new Set(added);
  for (const id of written.pinnedIds ?? []) if (!view.pinnedIds.has(id) && !remembered.has(id)) return;
  const pinnedIds = new Set(view.pinnedIds);
  for (const id of added) pinnedIds.add(id);
  (view as { pinnedIds: ReadonlySet<string> }).pinnedIds = pinnedIds;
  adoptState(view, written);
}
