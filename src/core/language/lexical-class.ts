/**
 * A word's lexical class from WordNet (issue 45), a part-of-speech signal that blocks nothing at
 * load: `word-classes.ts` is generated at build time (scripts/generate-word-classes.ts) as three
 * sorted word lists, searched in place by bisection (no table is built: splitting 12,000 words
 * into a map took 20-45 ms of CPU on first use, over the core's 20 ms for a synchronous stretch).
 */
import { onProcessCachesRelease } from '../process-caches.js';
import { NOT_VERB_WORDS, NOUN_VERB_WORDS, VERB_WORDS } from './word-classes.js';

/** `v` a verb and never a noun, `nv` both, `x` a frequent word that is no verb, `undefined` unknown. */
export type LexicalClass = 'v' | 'nv' | 'x';

const isSeparator = (code: number) => code === 32 || code === 10;

/** Whether `list` (words in code-unit order, split by spaces or line breaks) holds `word`. */
export function sortedListHolds(list: string, word: string): boolean {
  if (word === '') return false;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    let start = mid;
    while (start > lo && !isSeparator(list.charCodeAt(start - 1))) start--;
    let end = mid;
    while (end < hi && !isSeparator(list.charCodeAt(end))) end++;
    const here = list.slice(start, end);
    if (here === word) return true;
    if (here < word) lo = end + 1;
    else hi = start;
  }
  return false;
}

/** Words looked up lately and their class (`null` none): a conversation repeats its words. */
const recent = new Map<string, LexicalClass | null>();
onProcessCachesRelease(() => recent.clear());
/** Most words remembered; past it the memory starts again (bounded, and the answers never depend on it). */
const RECENT_WORDS = 8192;

/** The class WordNet gives a lowercase word, `undefined` for a word it does not hold (or an inflected form). */
export function lexicalClass(word: string): LexicalClass | undefined {
  const known = recent.get(word);
  if (known !== undefined) return known ?? undefined;
  let found: LexicalClass | null = null;
  if (sortedListHolds(NOUN_VERB_WORDS, word)) found = 'nv';
  else if (sortedListHolds(VERB_WORDS, word)) found = 'v';
  else if (sortedListHolds(NOT_VERB_WORDS, word)) found = 'x';
  if (recent.size >= RECENT_WORDS) recent.clear();
  recent.set(word, found);
  return found ?? undefined;
}
