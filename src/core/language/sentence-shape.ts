/**
 * The shape features of a sentence the instruction model reads (instruction-features.ts): the
 * opening's shape, a later clause's, modal, wish and negation shapes, word-class pairs and
 * numbers. Each reads the lexical view or the plain one by its `lexical` argument.
 *
 * The lexical view reads WordNet's word classes
 * (`lexical-class.ts`: a verb and no noun, both, or no verb) in the word-class pairs and at the
 * opening, "to" and degree words ("so", "very") as classes of their own, the class stream starting
 * past the lead-ins, and a preposition opening a sentence ("At the first stop, ...") read as no
 * imperative (issue 45, eighth pass: the model averages a linear model over each view,
 * eval/data/instructions/LABELS.md).
 */

import { onProcessCachesRelease } from '../process-caches.js';
import { type FeatureSink, featureTag } from './feature-sink.js';
import { lexicalClass } from './lexical-class.js';
import {
  modalShapesOf,
  SAYS_MODAL_YOU,
  SAYS_MUST,
  SAYS_NEGATION,
  SAYS_PLEASE,
  SAYS_WANT,
  SAYS_WANT_ASKED,
  SAYS_YOU,
} from './modal-shapes.js';

/**
 * Where a sentence stands among its message's sentences: "I'm going to New York." alone states
 * what the user wants done; the same words opening a prompt that asks something after them tell
 * the user's situation ("I own a bakery. How do I ...?").
 */
export type SentencePosition = 'only' | 'first' | 'middle' | 'last';

/** Words that open a sentence without changing what it asks: interjections, connectives. */
export const LEAD_IN = new Set(
  'ok okay so and but also then now first next just oh hey hi hello well btw anyway alright right yes no yeah sure great actually instead additionally lastly finally plus um hmm'.split(
    ' ',
  ),
);

const LEXICAL_OPENING = featureTag('lx:');
const SUFFIX = featureTag('sfx:');
const AFTER_OPENING = featureTag('n2:');
const OPENING = featureTag('o:');
const MODAL = featureTag('m:');
const TYPOGRAPHY = featureTag('t:');
const SHAPE_PAIR = featureTag('sb:');
const SHAPE_OPENING = featureTag('sbp:');
const NUMBERS = featureTag('num:');
const COUNTS = ['0', '1', '2', '3'];

/** Subjects that make the sentence a statement about the speaker or the world, not an ask. */
const SUBJECTS = new Set(
  "i i'm i've i'll me my we we're we've our it it's this that these those there there's the a an they they're he she his her its".split(
    ' ',
  ),
);
/** Modal and auxiliary openings: "could you ...", "do you ...", "is it ...". */
export const AUXILIARIES = new Set(
  "can could would will shall should may might must do does did is are was were have has had can't won't don't doesn't didn't isn't aren't".split(
    ' ',
  ),
);
const WH = new Set('what why how who whom whose where when which'.split(' '));
/** The addressee as subject: "You should ...", "Your task is ...", "Your command ran ...". */
const YOU = new Set("you your you're you'll you've you'd yours u".split(' '));
/** The addressee named in the third person: "The assistant must ...", "The agent is not allowed to ...". */
const AGENT = new Set(['assistant', 'agent', 'model', 'ai', 'bot', 'chatbot']);
/** Words that open the object of an imperative: "Book the train", "Send me", "Fix it". */
export const OBJECT_START = new Set(
  'the a an my me it this that these those your all some any every each one two three us them him her our their'.split(
    ' ',
  ),
);

/**
 * What "do" takes as its object when it is the imperative, not the auxiliary of a question:
 * "Do this step by step.", "Do it again.", "Do the same for the second list." ("Do you ...",
 * "Do I need ...", "Do they ..." ask; "does" and "did" never open an imperative).
 */
const DO_OBJECT = new Set(
  'this that it the a an all some each every one two three me us them him her my our'.split(' '),
);
/** "do" opening a clause before its object: the imperative verb, not an auxiliary. */
export function isImperativeDo(word: string, next: string | undefined): boolean {
  return word === 'do' && next !== undefined && DO_OBJECT.has(next);
}

/**
 * A bare opening in the third person ("Looks like a rounding issue", "Finds all files", "Moves the
 * window down"): a description or a report, where an imperative opens on the base form ("Find",
 * "Move"). Words ending in -ss, -us, -is are no third-person verbs ("Discuss", "Focus").
 */
function isDescribingVerb(word: string): boolean {
  return word.length > 3 && /^[a-z]+s$/.test(word) && !/(?:ss|us|is)$/.test(word);
}

/**
 * The sentence's first word past the lead-ins, read for its shape: a subject (a statement), an
 * auxiliary before "you" (a request) or before anything else (a question), a wh-word, or a bare
 * word, with its ending (a base-form verb "Execute" against a described "Executes", "Executed").
 */
export function openingShape(
  feature: FeatureSink,
  word: string,
  next: string,
  lexical: boolean,
  words: readonly string[] = [],
  at = 0,
): string {
  let shape = 'other';
  if (opensReport(words, at)) shape = 'subject';
  else if (YOU.has(word) || (word === 'the' && AGENT.has(next))) shape = 'you';
  else if (SUBJECTS.has(word)) shape = 'subject';
  else if (isImperativeDo(word, next)) shape = 'bare';
  else if (AUXILIARIES.has(word)) shape = next === 'you' || next === 'u' ? 'aux-you' : 'aux';
  else if (WH.has(word)) shape = 'wh';
  else if (lexical && PREPOSITIONS.has(word)) shape = 'prep';
  else if (isDescribingVerb(word)) shape = 'bare-s';
  else if (/^[a-z]+$/.test(word)) {
    shape = 'bare';
    // The opening's WordNet class and the next word's: "Consolidate the ..." (a verb and no
    // noun, then a word) against "Bakery hours are ..." (no verb).
    if (lexical)
      feature.add(
        true,
        LEXICAL_OPENING,
        lexicalClass(word) ?? 'unknown',
        next === '</s>' ? 'end' : (lexicalClass(next) ?? 'w'),
      );
    feature.addSuffix(false, SUFFIX, word, 2);
    feature.addSuffix(false, SUFFIX, word, 3);
    // What follows a bare opening: an object ("Book the train") or a verb ("Benjamin went", "Company Y posted").
    feature.add(
      false,
      AFTER_OPENING,
      OBJECT_START.has(next)
        ? 'object'
        : AUXILIARIES.has(next)
          ? 'aux'
          : /(?:ed|es|s)$/.test(next) && next.length > 3
            ? 'verb-like'
            : 'word',
    );
  }
  feature.add(true, OPENING, shape);
  return shape;
}

/** Words a clause's subject phrase is read over before its verb. */
const SUBJECT_SPAN = 8;
/** Clause marks: a subject phrase does not run past one. */
const CLAUSE_MARKS = new Set([',', ';', ':', '?', '!']);

/**
 * True when the opening at `words[at]` is the subject of a statement, not an imperative or an
 * address: "Your command ran successfully ..." and "You have made ..." (the addressee, or what is
 * theirs, as the subject of a past or perfect verb: a report of what happened, where "You should
 * ..." and "Your task is ..." ask), or "Running it again will lead to ..." and "Pushing is not
 * the end of the task." (an -ing word as the subject of a finite verb in its clause, where "Using
 * a table, compare ..." opens a lead clause and "looking for a restaurant" has no verb).
 */
export function opensReport(words: readonly string[], at: number): boolean {
  const word = words[at];
  if (word === undefined) return false;
  const you = YOU.has(word);
  if (!you && !isGerund(word)) return false;
  const end = Math.min(words.length, at + 1 + SUBJECT_SPAN);
  for (let i = at + 1; i < end; i++) {
    const w = words[i] as string;
    if (CLAUSE_MARKS.has(w)) return false;
    if (!you) {
      if (AUXILIARIES.has(w)) return true;
      if (RELATIVE.has(w)) return false;
      continue;
    }
    // The addressee's verb: the first past form, perfect or other auxiliary after "you" or "your ...".
    if (PAST.has(w)) return true;
    if (PERFECT.has(w)) {
      const after = words[i + 1] === 'not' ? words[i + 2] : words[i + 1];
      return after !== undefined && (after === 'been' || (after.length > 4 && after.endsWith('ed')));
    }
    if (AUXILIARIES.has(w) || RELATIVE.has(w)) return false;
    // "You" is followed by its verb ("You asked ..."); "your" by a few words of its noun phrase
    // first ("your proposed edit has ...", where an -ed word is no verb).
    if (word !== 'your') return w.length > 4 && w.endsWith('ed');
  }
  return false;
}

/** Words that open a relative or subordinate clause: a verb past them is not the subject's. */
const RELATIVE = new Set('that which who whom whose where when if because while'.split(' '));
/** Words in -ing that are no gerund: verbs whose base form ends so ("Bring ..."), a preposition, pronouns. */
const NOT_GERUND = new Set(
  'bring sing ring swing string sting fling cling wring spring during thing something anything nothing everything'.split(
    ' ',
  ),
);
/** An -ing word that can be a gerund: "Running", "Pushing", "Adding". */
function isGerund(word: string): boolean {
  return word.length > 4 && word.endsWith('ing') && !NOT_GERUND.has(word);
}

/** The shape of a later clause's opening: a bare word there is the imperative of "If it fails, stop.". */
export function clauseShape(word: string, next: string): string {
  if (SUBJECTS.has(word)) return 'subject';
  if (AUXILIARIES.has(word)) return next === 'you' ? 'aux-you' : 'aux';
  if (WH.has(word)) return 'wh';
  return /^[a-z]+$/.test(word) ? 'bare' : 'other';
}

/** Past-tense verbs that need no ending to be read: "Your command ran ...", "It was ...". */
const PAST = new Set(
  'was were had did ran went got came made said told took gave found wrote began'.split(' '),
);
const PERFECT = new Set(['has', 'have', 'had', "hasn't", "haven't"]);
/**
 * True when `words` report what happened or holds already, a past or perfect verb: "Your command
 * ran successfully", "Your terminal session has started", "The file was created": what a
 * program's output or a story says, rarely an ask.
 */
export function saysPast(words: readonly string[]): boolean {
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (PAST.has(word)) return true;
    if (!PERFECT.has(word)) continue;
    const next = words[i + 1] === 'not' ? words[i + 2] : words[i + 1];
    if (next !== undefined && (next === 'been' || (next.length > 4 && next.endsWith('ed')))) return true;
  }
  return false;
}

/** Modal, wish and negation shapes anywhere, and the sentence's typography (code, a definition list). */
export function shapeOf(feature: FeatureSink, text: string, words: readonly string[]): void {
  const shapes = modalShapesOf(words);
  if (shapes & SAYS_MODAL_YOU) feature.add(true, MODAL, 'modal-you');
  // "Do I need to sign in?" asks about a want, it states none.
  if (shapes & SAYS_WANT) feature.add(true, MODAL, shapes & SAYS_WANT_ASKED ? 'want-q' : 'want');
  if (shapes & SAYS_PLEASE) feature.add(true, MODAL, 'please');
  if (shapes & SAYS_NEGATION) feature.add(true, MODAL, 'neg');
  if (shapes & SAYS_YOU) feature.add(true, MODAL, 'you');
  if (shapes & SAYS_MUST) feature.add(true, MODAL, 'must');
  if (saysPast(words)) feature.add(false, MODAL, 'past');
  const lead = text.trimStart();
  if (lead.startsWith('`')) feature.add(false, TYPOGRAPHY, 'code-first');
  if (/^[^\s:]{1,40}:\s/.test(lead)) feature.add(false, TYPOGRAPHY, 'label-colon');
  if (/^[\p{So}\p{Sk}✅❌-]/u.test(lead)) feature.add(false, TYPOGRAPHY, 'bullet');
  const tick = text.indexOf('`');
  if (tick >= 0 && text.indexOf('`', tick + 1) >= 0) feature.add(false, TYPOGRAPHY, 'code');
  if (/\bhttps?:\/\//.test(text)) feature.add(false, TYPOGRAPHY, 'url');
}

/** The speaker: "I want ...", "my order", "we'd like". */
const FIRST_PERSON = new Set("i i'm i'd i'll i've me my we our us".split(' '));
/**
 * Prepositions: a sentence opening on one sets the scene ("In a survey ...", "At the first bus
 * stop, ...", "Along the riverbanks, ...") before its subject, where an imperative would open on its verb.
 */
const PREPOSITIONS = new Set(
  'in at on under from along within into onto over above below between among during after before since until through across behind beside near by with about against for of off via upon throughout despite beyond toward towards inside outside'.split(
    ' ',
  ),
);
/** Degree words: "so important", "really nice", "too late" (an opinion's shape, not an ask's). */
const DEGREE = new Set('so very really too quite pretty such'.split(' '));
/** Someone else as subject or object: narrative material ("He bought ...", "They asked me ..."). */
const THIRD_PERSON = new Set("he she they his her their them him it its it's".split(' '));

/**
 * A word's class, a cheap stand-in for its part of speech: a number, a mark, the addressee, the
 * speaker, a third person, an auxiliary, a determiner, a wh-word, or a word by its ending (-ed,
 * -ing, -ly, -s: past tense and participles, adverbs, plurals and third-person verbs).
 */
function classOf(word: string, lexical: boolean): string {
  if (word === '<num>') return 'N';
  if (lexical) {
    if (word === 'to') return 'TO';
    if (DEGREE.has(word)) return 'Q';
  }
  if (word.length === 1 && !/[a-z]/.test(word)) return word;
  if (YOU.has(word)) return 'Y';
  if (FIRST_PERSON.has(word)) return 'I';
  if (THIRD_PERSON.has(word)) return 'T';
  if (AUXILIARIES.has(word)) return 'A';
  if (OBJECT_START.has(word)) return 'D';
  if (WH.has(word)) return 'W';
  if (word.length > 4 && word.endsWith('ed')) return 'ed';
  if (word.length > 4 && word.endsWith('ing')) return 'ing';
  if (word.length > 3 && word.endsWith('ly')) return 'ly';
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return 's';
  return (lexical && lexicalClass(word)) || 'w';
}

/** Words classed lately, each view's class (a sentence's words come again in the other view and in later sentences). */
const classed = new Map<string, { plain: string; lexical: string }>();
onProcessCachesRelease(() => classed.clear());
/** Most words remembered; past it the memory starts again (bounded, and the answers never depend on it). */
const CLASSED_WORDS = 8192;

/** {@link classOf}, remembered. */
function wordClass(word: string, lexical: boolean): string {
  let known = classed.get(word);
  if (known === undefined) {
    if (classed.size >= CLASSED_WORDS) classed.clear();
    known = { plain: classOf(word, false), lexical: classOf(word, true) };
    classed.set(word, known);
  }
  return lexical ? known.lexical : known.plain;
}

/**
 * Pairs of word classes, and the first three classes read with the sentence's position: the
 * shape of "He bought 5 copies" (T ed N s) or "Your command ran successfully" (Y w w ly) against
 * "Book the earliest train" (w D w w), in words no other source uses (issue 45: part-of-speech
 * pairs lifted the held-out sources where words alone do not carry over; a tagger was too slow).
 */
export function shapeBigrams(
  feature: FeatureSink,
  words: readonly string[],
  position: SentencePosition,
  lexical: boolean,
): void {
  let prev = '<s>';
  let opening = '';
  // With the WordNet classes read, the stream starts past the lead-ins and "never", "always",
  // "please", as the opening features do: "Never close a case" reads as "close a case".
  const from = lexical ? leadLength(words) : 0;
  for (let i = from; i < words.length; i++) {
    // "Do this step by step.": the opening "do" before its object is a verb, not an auxiliary.
    let shape =
      ((prev === '<s>' || prev === ',' || prev === ':') &&
        isImperativeDo(words[i] as string, words[i + 1])) ||
      (words[i] === 'do' && words[i - 1] === 'to')
        ? lexical
          ? 'v'
          : 'w'
        : wordClass(words[i] as string, lexical);
    if (shape === 'nv') shape = nounOrVerb(prev, i > 0 ? (words[i - 1] as string) : '');
    // Two plain words in a row are most of any sentence: the pair tells nothing, and read as
    // a feature it worked as a second bias toward "instruction".
    if (prev !== 'w' || shape !== 'w') feature.add(false, SHAPE_PAIR, prev, shape);
    if (i - from < 3) opening = i === from ? shape : `${opening} ${shape}`;
    prev = shape;
  }
  feature.add(false, SHAPE_PAIR, prev, '</s>');
  feature.add(false, SHAPE_OPENING, position, opening);
}

/** How many of `words` open the sentence without being its verb (lead-ins, "never", "please"); the last word never. */
function leadLength(words: readonly string[]): number {
  let n = 0;
  while (n < words.length - 1 && (LEAD_IN.has(words[n] as string) || ADVERB_LEAD.has(words[n] as string)))
    n++;
  return n;
}

/** Subjects and modals before which a noun-verb is a verb ("you issue", "we book", "can check"). */
const VERB_BEFORE = new Set(['Y', 'I', 'T', 'A']);
/**
 * A noun-verb read by the word before it: a verb after a subject, a modal, "to", "please",
 * "let's"; no verb after a determiner or after a verb ("slow down", "book flights").
 */
function nounOrVerb(prevClass: string, prevWord: string): string {
  if (VERB_BEFORE.has(prevClass) || prevWord === 'to' || prevWord === 'please' || prevWord === "let's")
    return 'v';
  if (prevClass === 'D' || prevClass === 'v') return 'x';
  return 'nv';
}

/** How many numbers the sentence holds, and whether one is an amount of money. */
export function numbersOf(feature: FeatureSink, text: string, words: readonly string[]): void {
  let count = 0;
  for (const word of words) if (word === '<num>') count++;
  feature.add(false, NUMBERS, COUNTS[Math.min(3, count)] as string);
  if (/[$€£]\d/.test(text)) feature.add(false, NUMBERS, 'money');
}

/** Words that open an imperative without being its verb: the opening read is the word after. */
export const ADVERB_LEAD = new Set("never always please don't dont".split(' '));
