/**
 * What the rest of a message asks, as a cue for each of its sentences (issue 45): "I'm a truck
 * driver making $65k a year." opening a message that asks "How should I budget?" after it is the
 * user's situation; the same words said alone state what the user wants done. Each sentence's
 * kind is read from its opening and closing mark alone (no model), so the cues of a message cost
 * one pass over it, from its end.
 */

import { releaseRegExpCode } from '../process-caches.js';
import { lexicalClass } from './lexical-class.js';
import { ADVERB_LEAD, LEAD_IN } from './sentence-shape.js';

/**
 * What the sentences after one in its message do: `none` (no sentence after it, or none that
 * asks), `q` (a question, or a request put as one: "Could you ...?"), `imp` (an imperative or a
 * want: "Write ...", "I'd like ..."), `q+imp` (both).
 */
export type LaterCue = 'none' | 'q' | 'imp' | 'q+imp';

const QUESTION = 1;
const ORDER = 2;
const CUES: readonly LaterCue[] = ['none', 'q', 'imp', 'q+imp'];

/** Openings that make a statement, not an ask: a subject, a wh-word without a question mark, a preposition. */
const STATEMENT_OPENING = new Set(
  "i i'm i've i'll me my we we're we've our it it's this that these those there there's the a an they they're he she his her its you your you're in at on for of with from as when if what why how who which where".split(
    ' ',
  ),
);
const MODAL = new Set('can could would will'.split(' '));
const WANT = /^(?:i'd|i would|we'd|we would) (?:like|love|prefer)\b|^i (?:want|need)\b/;

/** The first words of `sentence`, lower case, straight apostrophes, past its non-letters. */
function openingWords(sentence: string): string[] {
  const head = sentence.length > 80 ? sentence.slice(0, 80) : sentence;
  return head
    .toLowerCase()
    .replace(/[’‘`´]/g, "'")
    .split(/[^a-z']+/, 8)
    .filter(Boolean);
}

/** What one sentence does: asks a question (1), orders or wants (2), both, or neither (0). */
export function sentenceAsks(sentence: string): number {
  const trimmed = sentence.trimEnd();
  let kind = trimmed.endsWith('?') ? QUESTION : 0;
  const words = openingWords(trimmed);
  let i = 0;
  while (i < words.length - 1 && (LEAD_IN.has(words[i] as string) || ADVERB_LEAD.has(words[i] as string)))
    i++;
  const first = words[i];
  if (first === undefined) return kind;
  if (MODAL.has(first) && (words[i + 1] === 'you' || words[i + 1] === 'u')) kind |= QUESTION;
  else if (WANT.test(words.slice(i, i + 3).join(' '))) kind |= ORDER;
  else if (i > 0 && ADVERB_LEAD.has(words[i - 1] as string)) kind |= ORDER;
  else if (!STATEMENT_OPENING.has(first) && !first.includes("'") && lexicalClass(first) !== 'x')
    // A bare opening that may be a verb ("Write ...", "Explain ..."), not a noun ("Oranges cost ...").
    kind |= ORDER;
  return kind;
}

/** The cue of each of `sentences` (one message's, in order): what the sentences after it ask. */
export function laterCuesOf(sentences: readonly string[]): LaterCue[] {
  const out = new Array<LaterCue>(sentences.length);
  let after = 0;
  for (let k = sentences.length - 1; k >= 0; k--) {
    out[k] = CUES[after] as LaterCue;
    after |= sentenceAsks(sentences[k] as string);
  }
  return out;
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(WANT);
