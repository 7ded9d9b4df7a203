/**
 * Rarity in general English, from a small shipped table (`common-words.ts`: the 8,000 most
 * frequent words of spoken English). A word the table ranks low, or does not hold, tells more
 * than one every conversation uses ("guitar", "Sweden", "pottery" against "great", "time").
 */
import { onProcessCachesRelease } from '../process-caches.js';
import { COMMON_WORDS } from './common-words.js';

/** Rank given to a word the table does not hold. */
export const UNLISTED_RANK = 8001;
/** Words ranked up to this carry no general rarity. */
const COMMON_RANK = 400;

let ranks: Map<string, number> | undefined;
// 0.45 MB of heap: dropped with the last manager, built again on next use.
onProcessCachesRelease(() => {
  ranks = undefined;
});

function table(): Map<string, number> {
  if (!ranks) {
    ranks = new Map();
    for (const word of COMMON_WORDS.split(/\s+/))
      if (word && !ranks.has(word)) ranks.set(word, ranks.size + 1);
  }
  return ranks;
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
