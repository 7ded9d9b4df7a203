/**
 * Rarity in general English, from a small shipped table (`common-words.ts`: the 8,000 most
 * frequent words of spoken English). A word the table ranks low, or does not hold, tells more
 * than one every conversation uses ("guitar", "Sweden", "pottery" against "great", "time").
 */
import { onProcessCachesRelease } from '../process-caches.js';
import type { Steps } from '../time-slice.js';
import { COMMON_WORDS } from './common-words.js';

/** Rank given to a word the table does not hold. */
export const UNLISTED_RANK = 8001;
/** Words ranked up to this carry no general rarity. */
const COMMON_RANK = 400;

let ranks: Map<string, number> | undefined;
/** A build under way: the table so far and where the next word starts in {@link COMMON_WORDS}. */
let partial: { table: Map<string, number>; at: number } | undefined;
// 0.45 MB of heap: dropped with the last manager, built again on next use.
onProcessCachesRelease(() => {
  ranks = undefined;
  partial = undefined;
});

/** Words added to the table per step of {@link wordRankSteps} (the whole table: 10-18 ms of CPU cold). */
const WORDS_PER_STEP = 500;

/** Adds up to `count` words to the table under way (starting one); true once it is complete. */
function fill(count: number): boolean {
  if (ranks) return true;
  partial ??= { table: new Map(), at: 0 };
  const { table } = partial;
  let { at } = partial;
  const end = COMMON_WORDS.length;
  for (let added = 0; added < count && at < end; ) {
    const code = COMMON_WORDS.charCodeAt(at);
    // Words are lowercase letters, one space or line break between them.
    if (code === 32 || code === 10 || code === 13 || code === 9) {
      at++;
      continue;
    }
    let stop = at + 1;
    while (stop < end && COMMON_WORDS.charCodeAt(stop) > 32) stop++;
    const word = COMMON_WORDS.slice(at, stop);
    if (!table.has(word)) table.set(word, table.size + 1);
    at = stop;
    added++;
  }
  partial.at = at;
  if (at < end) return false;
  ranks = table;
  partial = undefined;
  return true;
}

function table(): Map<string, number> {
  fill(Number.POSITIVE_INFINITY);
  return ranks!;
}

/**
 * Builds the rank table if the process has none, a step after every few hundred words (a
 * summary's scoring runs it first: built at once, its first lookup held the loop 10-18 ms).
 * A lookup meanwhile finishes the same build at once.
 */
export function* wordRankSteps(): Steps<void> {
  while (!fill(WORDS_PER_STEP)) yield;
}

/** The rank of a lowercase word in the table (1 most frequent), a plural read as its singular; {@link UNLISTED_RANK} when absent. */
export function wordRank(word: string): number {
  const t = table();
  const direct = t.get(word);
  if (direct !== undefined) return direct;
  if (word.length > 3 && word.endsWith('s')) {
    const singular = t.get(word.slice(0, -1)) ?? (word.endsWith('es') ? t.get(word.slice(0, -2)) : undefined);
    if (singular !== undefined) return singular;
  }
  return UNLISTED_RANK;
}

/**
 * General rarity of a lowercase word in [0, 1]: 0 for the few hundred most frequent words,
 * rising with the log of the rank, 1 for a word the table does not hold. Words with a digit
 * are codes or numbers: 1.
 */
export function generalRarity(word: string): number {
  if (/\d/.test(word)) return 1;
  const rank = wordRank(word);
  if (rank <= COMMON_RANK) return 0;
  return Math.min(1, Math.log(rank / COMMON_RANK) / Math.log(UNLISTED_RANK / COMMON_RANK));
}
