/**
 * The modal, wish and negation shapes of a sentence's words (sentence-shape.ts `shapeOf`): "can
 * you", "I'd like", "I want", "please", "don't", "you", "must", "have to", and a want asked
 * about ("Do I need ...?"). Found in one pass over the words, one map lookup a word: a word's
 * roles are bits, and a shape of two or three words is a word's bit over the words' before it.
 */

/** A shape found: the bits {@link modalShapesOf} returns. */
export const SAYS_MODAL_YOU = 1;
export const SAYS_WANT = 2;
export const SAYS_WANT_ASKED = 4;
export const SAYS_PLEASE = 8;
export const SAYS_NEGATION = 16;
export const SAYS_YOU = 32;
export const SAYS_MUST = 64;

// A word's roles.
const MODAL = 1 << 0;
const YOU_OR_U = 1 << 1;
const WISHED = 1 << 2;
const I_OR_WE = 1 << 3;
const WOULD = 1 << 4;
const LIKE = 1 << 5;
const I = 1 << 6;
const WANT_VERB = 1 << 7;
const ASKING = 1 << 8;
const ASKED = 1 << 9;
const PLEASE_WORD = 1 << 10;
const NEGATING = 1 << 11;
const DO = 1 << 12;
const NOT = 1 << 13;
const YOU_WORD = 1 << 14;
const MUST_WORD = 1 << 15;
const HAVE = 1 << 16;
const TO = 1 << 17;

const ROLES = new Map<string, number>();
const give = (role: number, words: string) => {
  for (const word of words.split(' ')) ROLES.set(word, (ROLES.get(word) ?? 0) | role);
};
give(MODAL, 'can could would will');
give(YOU_OR_U, 'you u');
give(WISHED, "i'd we'd");
give(I_OR_WE, 'i we');
give(WOULD, 'would');
give(LIKE, 'like love prefer rather');
give(I, 'i');
give(WANT_VERB, 'want need wish prefer');
give(ASKING, 'do does did should shall must can could would will am');
give(ASKED, 'want need wish prefer like love');
give(PLEASE_WORD, 'please pls kindly');
give(NEGATING, "don't never dont mustn't shouldn't avoid without");
give(DO, 'do');
give(NOT, 'not');
give(YOU_WORD, 'you your');
give(MUST_WORD, 'must should');
give(HAVE, 'has have needs need');
give(TO, 'to');

/**
 * The shapes `words` hold, as bits: {@link SAYS_MODAL_YOU} "can/could/would/will you/u", {@link SAYS_WANT}
 * "i'd/we'd like/love/prefer/rather", "i/we would" and the same, "i want/need/wish/prefer",
 * {@link SAYS_WANT_ASKED} "do/does/did/should/shall/must/can/could/would/will/am i/we
 * want/need/wish/prefer/like/love", {@link SAYS_PLEASE}, {@link SAYS_NEGATION} ("don't", "do not", "never",
 * "avoid", "without" ...), {@link SAYS_YOU} ("you", "your"), {@link SAYS_MUST} ("must", "should", "has to",
 * "have to", "needs to", "need to").
 */
export function modalShapesOf(words: readonly string[]): number {
  let found = 0;
  let before = 0;
  let twoBefore = 0;
  for (const word of words) {
    const roles = ROLES.get(word) ?? 0;
    if (roles !== 0) {
      if (roles & YOU_OR_U && before & MODAL) found |= SAYS_MODAL_YOU;
      if (roles & LIKE && (before & WISHED || (before & WOULD && twoBefore & I_OR_WE))) found |= SAYS_WANT;
      if (roles & WANT_VERB && before & I) found |= SAYS_WANT;
      if (roles & ASKED && before & I_OR_WE && twoBefore & ASKING) found |= SAYS_WANT_ASKED;
      if (roles & PLEASE_WORD) found |= SAYS_PLEASE;
      if (roles & NEGATING || (roles & NOT && before & DO)) found |= SAYS_NEGATION;
      if (roles & YOU_WORD) found |= SAYS_YOU;
      if (roles & MUST_WORD || (roles & TO && before & HAVE)) found |= SAYS_MUST;
    }
    twoBefore = before;
    before = roles;
  }
  return found;
}
