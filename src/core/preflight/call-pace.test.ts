/**
 * Issue 47 point 5: the cost trigger's pace reads only the entries a view gained since the last
 * call (it read the whole view on every call: O(n) per warm call, ~3 ms at 100k messages), and
 * gives what reading the whole view gives.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../policy.js';
import type { SessionState } from '../session/session-store.js';
import { paceOf } from './call-pace.js';
import type { SessionView, ViewEntry } from './view/session-view.js';

const policy = { ...DEFAULT_POLICY, costTrigger: true };

/** The pace read from the whole view (the rule paceOf keeps). */
function wholeViewPace(ids: readonly string[], matched: SessionState | undefined) {
  const kept = matched?.keptIds ?? [];
  const newest = kept.at(-1);
  let appended = 0;
  while (appended < ids.length && ids[ids.length - 1 - appended] !== newest) appended++;
  if (appended === ids.length && matched?.pace?.trough !== undefined)
    appended = Math.max(0, ids.length - kept.length);
  return { trough: matched?.pace?.trough, appended };
}

/** A view of `ids` whose entries count the reads of their item. */
function viewOf(ids: readonly string[], matched: SessionState | undefined) {
  const reads = { count: 0 };
  const entryOf = (id: string) =>
    ({
      get item() {
        reads.count++;
        return { id };
      },
    }) as unknown as ViewEntry;
  const view = { matched, entries: ids.map(entryOf) } as unknown as SessionView;
  const append = (id: string) => (view.entries as ViewEntry[]).push(entryOf(id));
  return { view, reads, append };
}

const state = (keptIds: string[], trough?: number): SessionState => ({
  sessionId: 's',
  version: 1,
  coveredIds: [],
  updatedAt: 0,
  keptIds,
  ...(trough === undefined ? {} : { pace: { trough } }),
});

describe('paceOf', () => {
  it('reads only the new entries of a growing view, with the whole view’s result', () => {
    for (const matched of [undefined, state(['m3', 'm5'], 900), state(['gone'], 400), state(['m5'])]) {
      const ids = Array.from({ length: 2_000 }, (_, k) => `m${k}`);
      const { view, reads, append } = viewOf(ids, matched);
      expect(paceOf(view, policy)).toEqual(wholeViewPace(ids, matched));
      for (let call = 0; call < 20; call++) {
        reads.count = 0;
        const added = call % 3;
        for (let k = 0; k < added; k++) {
          // Now and then the newest kept message comes again (a resent copy).
          const id = call % 7 === 3 && k === 0 ? 'm5' : `n${call}-${k}`;
          ids.push(id);
          append(id);
        }
        expect(paceOf(view, policy)).toEqual(wholeViewPace(ids, matched));
        expect(reads.count).toBeLessThanOrEqual(added);
      }
    }
  });

  it('reads nothing with the cost trigger off', () => {
    const { view, reads } = viewOf(['a', 'b'], state(['a'], 10));
    expect(paceOf(view, { ...policy, costTrigger: false })).toEqual({ trough: 10, appended: 0 });
    expect(reads.count).toBe(0);
  });
});
