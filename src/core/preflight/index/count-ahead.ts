/**
 * Step 3's tokenizing, done ahead in slices when a call brings many messages the session has
 * not counted (its first call, a history the index had to roll back): counts are cached on
 * the index entries and rewrites in the rewrite cache, so the view built next (step 2,
 * resume-view.ts) finds them ready instead of tokenizing a long history in one block.
 */
import { countMessageSteps, hasLongText, type TokenCounter } from '../../counting/token-counter.js';
import { newestBoundarySteps } from '../../messages/formats/provider-compaction.js';
import { entryTokens, type IndexedMessage, toCompactMessage } from '../../messages/message-index.js';
import type { SessionRewrite, SessionState } from '../../session/session-store.js';
import { runSteps, runStepsYielding, type TimeSlice } from '../../time-slice.js';
import type { RealizedRewrite } from '../view/session-view.js';
import type { IndexedHistory } from './index-request.js';

/** New messages whose boundary scan runs at once (no await: a warm call's few). */
const SCAN_AT_ONCE = 4_096;

/** What counting ahead needs. */
export interface CountAheadInput {
  readonly counter: TokenCounter;
  readonly history: IndexedHistory;
  /** The session's stored state: what its summary covers is never counted, its rewrites are realized. */
  readonly stored: SessionState | undefined;
  /** The rewrite of a message made real (cached by the caller, as the view asks for it). */
  readonly realize: (item: IndexedMessage, rewrite: SessionRewrite) => RealizedRewrite;
  /** Counts messages tokenized by this call. */
  readonly fresh: { count: number };
  /** Counts stored with the session's state, by content hash (see persist-counts.ts): reused, not recounted. */
  readonly known?: ReadonlyMap<string, number> | undefined;
}

/**
 * Counts the messages from the first changed position that the view will count: not those
 * the stored summary covers, nor those before the newest provider compaction boundary (sent
 * as is, counted 0). Giving the loop a turn whenever `slice` has run its time; the results
 * are the ones the view would compute itself.
 */
export async function countAhead(input: CountAheadInput, slice: TimeSlice): Promise<void> {
  const { counter, history: indexed, stored, fresh } = input;
  const items = indexed.items;
  const covered = stored?.coveredIds.length ? new Set(stored.coveredIds) : undefined;
  const rewrites = stored?.rewrites;
  // Only a boundary at or after the first changed position moves the start: the scan stops
  // there (in slices over a long history; at once for a warm call's few new messages).
  const scan = newestBoundarySteps(items, indexed.changedFrom);
  const boundary =
    items.length - indexed.changedFrom > SCAN_AT_ONCE ? await runStepsYielding(scan, slice) : runSteps(scan);
  for (let i = Math.max(indexed.changedFrom, boundary); i < items.length; i++) {
    const item = items.at(i)!;
    if (covered?.has(item.id)) continue;
    if (item.entry.tokens?.get(counter) === undefined) {
      const known = input.known?.get(item.entry.hash);
      if (known === undefined) {
        // A message with a long text (a 10 MB tool output) is counted across turns of the loop.
        const steps = hasLongText(item.entry.parsed)
          ? countMessageSteps(counter, toCompactMessage(item))
          : undefined;
        if (steps === undefined) entryTokens(item, counter);
        else item.entry.tokens.set(counter, await runStepsYielding(steps, slice));
        fresh.count++;
      } else {
        item.entry.tokens.set(counter, known);
      }
    }
    const rewrite = rewrites?.[item.id];
    if (rewrite && (rewrite.hash === undefined || rewrite.hash === item.entry.hash))
      input.realize(item, rewrite);
    if (slice.due()) await slice.pause();
  }
}
