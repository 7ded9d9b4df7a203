/**
 * The features the instruction model reads from one sentence (issue 45): word pairs,
 * the opening words of the sentence and of each clause (where an imperative or "I'd like" stands,
 * past "never", "always", "please", "don't"),
 * modal and negation shapes, the closing mark, the length, and the conversation's context (is the
 * other side an AI assistant, or a person). Each feature is a string hashed into a fixed number of
 * buckets (FNV-1a), so the weights are one small array. Linear in the sentence's length.
 */

import { lexicalClass } from './lexical-class.js';

/**
 * Whether the features being read are the lexical view: WordNet's word classes
 * (`lexical-class.ts`: a verb and no noun, both, or no verb) in the word-class pairs and at the
 * opening, "to" and degree words ("so", "very") as classes of their own, the class stream starting
 * past the lead-ins, and a preposition opening a sentence ("At the first stop, ...") read as no
 * imperative. Set by {@link featuresOf} for the length of one call (issue 45, eighth pass: the
 * model averages a linear model over each view, eval/data/instructions/LABELS.md).
 */
let readLexical = false;

/** Who the user talks to: an AI assistant or service (a system prompt, tools), or a person. */
export type InstructionContext = 'assistant' | 'person';

/**
 * Where a sentence stands among its message's sentences: "I'm going to New York." alone states
 * what the user wants done; the same words opening a prompt that asks something after them tell
 * the user's situation ("I own a bakery. How do I ...?").
 */
export type SentencePosition = 'only' | 'first' | 'middle' | 'last';

/** The position of the `index`th of `count` sentences. */
export function positionOf(index: number, count: number): SentencePosition {
  if (count <= 1) return 'only';
  if (index === 0) return 'first';
  return index === count - 1 ? 'last' : 'middle';
}

/** Number of hash buckets: the weights array's length (a power of two). */
export const FEATURE_BUCKETS = 1 << 15;
/** Longest part of a sentence read (a pasted blob beyond it decides nothing). */
export const MAX_SENTENCE_CHARS = 600;
/** Most words read from one sentence. */
const MAX_WORDS = 60;

/** FNV-1a over a string's UTF-16 units, masked into the buckets. */
export function bucketOf(feature: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < feature.length; i++) {
    hash ^= feature.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) & (FEATURE_BUCKETS - 1);
}

/** Words that open a sentence without changing what it asks: interjections, connectives. */
const LEAD_IN = new Set(
  'ok okay so and but also then now first next just oh hey hi hello well btw anyway alright right yes no yeah sure great actually instead additionally lastly finally plus um hmm'.split(
    ' ',
  ),
);

/** The sentence's words, lower case, with curly apostrophes and quotes made straight. */
export function wordsOf(sentence: string): string[] {
  const text = headOf(sentence)
    .toLowerCase()
    .replace(/[’‘`´]/g, "'");
  const out: string[] = [];
  for (const match of text.matchAll(/[a-z]+(?:'[a-z]+)?|\d+|[,;:?!]/g)) {
    out.push(/^\d+$/.test(match[0]) ? '<num>' : match[0]);
    if (out.length >= MAX_WORDS) break;
  }
  return out;
}

/** The part of a sentence read: its first {@link MAX_SENTENCE_CHARS} characters. */
export function headOf(sentence: string): string {
  return sentence.length > MAX_SENTENCE_CHARS ? sentence.slice(0, MAX_SENTENCE_CHARS) : sentence;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** FNV-1a continued over `text` (a feature's hash is its parts hashed in a row, never joined). */
function mix(hash: number, text: string): number {
  let h = hash;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h;
}
const space = (hash: number) => Math.imul(hash ^ 32, FNV_PRIME);
/** The hash a feature string starting with `P|` starts from: the same feature said to a person. */
const PERSON_OFFSET = mix(FNV_OFFSET, 'P|');

/** Collects a sentence's buckets, each once (a stamp per bucket instead of a set per sentence). */
class BucketList {
  readonly out: number[] = [];
  constructor(
    private readonly stamps: Uint32Array,
    private readonly stamp: number,
  ) {}
  add(hash: number): void {
    const bucket = (hash >>> 0) & (FEATURE_BUCKETS - 1);
    if (this.stamps[bucket] === this.stamp) return;
    this.stamps[bucket] = this.stamp;
    this.out.push(bucket);
  }
}
const plainStamps = new Uint32Array(FEATURE_BUCKETS);
const lexicalStamps = new Uint32Array(FEATURE_BUCKETS);
let stamp = 0;

/**
 * The hashed features of `sentence` said in `context`, each bucket once (a feature is there or
 * not). Each is the FNV-1a hash of a string such as `w:word`, `b:prev word`, `f2:first next`;
 * said to a person, the opening features, the closing mark and the bias come again with `P|`.
 * `lexical` reads the lexical view (WordNet's word classes, see `readLexical`).
 */
export function featuresOf(
  sentence: string,
  context: InstructionContext,
  position: SentencePosition = 'only',
  lexical = false,
): number[] {
  const [plain, lexicalView] = collect(sentence, context, position, !lexical, lexical);
  return lexical ? lexicalView : plain;
}

/**
 * Both views' features of `sentence` in one pass (what the two views share is hashed once):
 * the same buckets, in the same order, as {@link featuresOf} gives for each.
 */
export function featureViewsOf(
  sentence: string,
  context: InstructionContext,
  position: SentencePosition = 'only',
): [plain: number[], lexical: number[]] {
  return collect(sentence, context, position, true, true);
}

/** A feature adder writing to `lists` (and their person twins when said to a person). */
function adder(lists: readonly BucketList[], person: boolean): AddFeature {
  return (twin, tag, a, b, c) => {
    const rest = (h: number) => {
      let out = mix(h, a);
      if (b !== undefined) out = mix(space(out), b);
      if (c !== undefined) out = mix(space(out), c);
      return out;
    };
    const hash = rest(mix(FNV_OFFSET, tag));
    for (const list of lists) list.add(hash);
    if (twin && person) {
      const twinHash = rest(mix(PERSON_OFFSET, tag));
      for (const list of lists) list.add(twinHash);
    }
  };
}

function collect(
  sentence: string,
  context: InstructionContext,
  position: SentencePosition,
  withPlain: boolean,
  withLexical: boolean,
): [number[], number[]] {
  const words = wordsOf(sentence);
  stamp = stamp === 0xffffffff ? 1 : stamp + 1;
  if (stamp === 1) {
    plainStamps.fill(0);
    lexicalStamps.fill(0);
  }
  const plainList = new BucketList(plainStamps, stamp);
  const lexicalList = new BucketList(lexicalStamps, stamp);
  const person = context === 'person';
  const lists = [...(withPlain ? [plainList] : []), ...(withLexical ? [lexicalList] : [])];
  const feature = adder(lists, person);
  const views: Array<[boolean, AddFeature]> = [];
  if (withPlain) views.push([false, adder([plainList], person)]);
  if (withLexical) views.push([true, adder([lexicalList], person)]);
  const last = headOf(sentence).trimEnd().slice(-1);
  feature(true, 'bias', '');
  feature(true, 'end:', last === '?' || last === '!' || last === '.' ? last : 'none');
  feature(false, 'len:', String(Math.min(6, Math.floor(Math.log2(words.length + 1)))));
  feature(false, 'p:', position);
  // Word pairs, not single words: a lone word ("restaurant", "movie", "test") names a source's
  // topic and, learned, flags its topic held out (issue 45, leave-one-source-out: every
  // held-out source's precision and recall moved up or stayed without them).
  let prev = '<s>';
  for (const word of words) {
    feature(false, 'b:', prev, word);
    prev = word;
  }
  feature(false, 'b:', prev, '</s>');
  openings(feature, views, words, position);
  shapeOf(feature, headOf(sentence), words);
  for (const [lexical, viewFeature] of views) {
    readLexical = lexical;
    shapeBigrams(viewFeature, words, position);
  }
  numbersOf(feature, headOf(sentence), words);
  return [plainList.out, lexicalList.out];
}

/** The opening words of the sentence and of each clause, past the lead-ins; the sentence's opening read by each view. */
function openings(
  feature: AddFeature,
  views: ReadonlyArray<[boolean, AddFeature]>,
  words: readonly string[],
  position: SentencePosition,
): void {
  let start = true;
  let clause = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word === ',' || word === ';' || word === ':') {
      start = true;
      continue;
    }
    if (!start || LEAD_IN.has(word)) continue;
    // "Never close ...", "Always use ...", "Please book ...": the imperative is the word after.
    if (ADVERB_LEAD.has(word) && i + 1 < words.length) {
      feature(true, 'adv:', word);
      continue;
    }
    start = false;
    const next = words[i + 1] ?? '</s>';
    feature(true, 'f:', word);
    feature(true, 'f2:', word, next);
    feature(true, 'f3:', word, next, words[i + 2] ?? '</s>');
    feature(true, clause === 0 ? 'fS:' : 'fC:', word);
    if (clause++ > 0) feature(false, 'oC:', clauseShape(word, next));
    else {
      for (const [lexical, viewFeature] of views) {
        readLexical = lexical;
        const shape = openingShape(viewFeature, word, next);
        // The opening read with the sentence's position: "I'm ..." alone, or opening a prompt.
        viewFeature(false, 'po:', position, shape);
      }
      feature(false, 'pf:', position, word);
    }
  }
}

type AddFeature = (twin: boolean, tag: string, a: string, b?: string, c?: string) => void;

/** Subjects that make the sentence a statement about the speaker or the world, not an ask. */
const SUBJECTS = new Set(
  "i i'm i've i'll me my we we're we've our it it's this that these those there there's the a an they they're he she his her its".split(
    ' ',
  ),
);
/** Modal and auxiliary openings: "could you ...", "do you ...", "is it ...". */
const AUXILIARIES = new Set(
  "can could would will shall should may might must do does did is are was were have has had can't won't don't doesn't didn't isn't aren't".split(
    ' ',
  ),
);
const WH = new Set('what why how who whom whose where when which'.split(' '));
/** The addressee as subject: "You should ...", "Your task is ...", "Your command ran ...". */
const YOU = new Set("you your you're you'll you've you'd yours u".split(' '));
/** Words that open the object of an imperative: "Book the train", "Send me", "Fix it". */
const OBJECT_START = new Set(
  'the a an my me it this that these those your all some any every each one two three us them him her our their'.split(
    ' ',
  ),
);

/**
 * The sentence's first word past the lead-ins, read for its shape: a subject (a statement), an
 * auxiliary before "you" (a request) or before anything else (a question), a wh-word, or a bare
 * word, with its ending (a base-form verb "Execute" against a described "Executes", "Executed").
 */
function openingShape(feature: AddFeature, word: string, next: string): string {
  let shape = 'other';
  if (YOU.has(word)) shape = 'you';
  else if (SUBJECTS.has(word)) shape = 'subject';
  else if (AUXILIARIES.has(word)) shape = next === 'you' || next === 'u' ? 'aux-you' : 'aux';
  else if (WH.has(word)) shape = 'wh';
  else if (readLexical && PREPOSITIONS.has(word)) shape = 'prep';
  else if (/^[a-z]+$/.test(word)) {
    shape = 'bare';
    // The opening's WordNet class and the next word's: "Consolidate the ..." (a verb and no
    // noun, then a word) against "Bakery hours are ..." (no verb).
    if (readLexical)
      feature(
        true,
        'lx:',
        lexicalClass(word) ?? 'unknown',
        next === '</s>' ? 'end' : (lexicalClass(next) ?? 'w'),
      );
    feature(false, 'sfx:', word.slice(-2));
    feature(false, 'sfx:', word.slice(-3));
    // What follows a bare opening: an object ("Book the train") or a verb ("Benjamin went", "Company Y posted").
    feature(
      false,
      'n2:',
      OBJECT_START.has(next) ? 'object' : /(?:ed|es|s)$/.test(next) && next.length > 3 ? 'verb-like' : 'word',
    );
  }
  feature(true, 'o:', shape);
  return shape;
}

/** The shape of a later clause's opening: a bare word there is the imperative of "If it fails, stop.". */
function clauseShape(word: string, next: string): string {
  if (SUBJECTS.has(word)) return 'subject';
  if (AUXILIARIES.has(word)) return next === 'you' ? 'aux-you' : 'aux';
  if (WH.has(word)) return 'wh';
  return /^[a-z]+$/.test(word) ? 'bare' : 'other';
}

/** Modal, wish and negation shapes anywhere, and the sentence's typography (code, a definition list). */
function shapeOf(feature: AddFeature, text: string, words: readonly string[]): void {
  const joined = ` ${words.join(' ')} `;
  if (/ (?:can|could|would|will) (?:you|u) /.test(joined)) feature(true, 'm:', 'modal-you');
  if (
    / (?:i'd|i would|we'd|we would) (?:like|love|prefer|rather) | i (?:want|need|wish|prefer) /.test(joined)
  )
    // "Do I need to sign in?" asks about a want, it states none.
    feature(true, 'm:', WANT_ASKED.test(joined) ? 'want-q' : 'want');
  if (/ (?:please|pls|kindly) /.test(joined)) feature(true, 'm:', 'please');
  if (/ (?:don't|do not|never|dont|mustn't|shouldn't|avoid|without) /.test(joined))
    feature(true, 'm:', 'neg');
  if (/ (?:you|your) /.test(joined)) feature(true, 'm:', 'you');
  if (/ (?:must|should|has to|have to|needs to|need to) /.test(joined)) feature(true, 'm:', 'must');
  const lead = text.trimStart();
  if (lead.startsWith('`')) feature(false, 't:', 'code-first');
  if (/^[^\s:]{1,40}:\s/.test(lead)) feature(false, 't:', 'label-colon');
  if (/^[\p{So}\p{Sk}✅❌-]/u.test(lead)) feature(false, 't:', 'bullet');
  if ((text.match(/`/g)?.length ?? 0) >= 2) feature(false, 't:', 'code');
  if (/\bhttps?:\/\//.test(text)) feature(false, 't:', 'url');
}

/** A want asked about, not stated: "Do I need ...", "Should we want ...". */
const WANT_ASKED =
  / (?:do|does|did|should|shall|must|can|could|would|will|am) (?:i|we) (?:want|need|wish|prefer|like|love) /;

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
function wordClass(word: string): string {
  if (word === '<num>') return 'N';
  if (readLexical) {
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
  return (readLexical && lexicalClass(word)) || 'w';
}

/**
 * Pairs of word classes, and the first three classes read with the sentence's position: the
 * shape of "He bought 5 copies" (T ed N s) or "Your command ran successfully" (Y w w ly) against
 * "Book the earliest train" (w D w w), in words no other source uses (issue 45: part-of-speech
 * pairs lifted the held-out sources where words alone do not carry over; a tagger was too slow).
 */
function shapeBigrams(feature: AddFeature, words: readonly string[], position: SentencePosition): void {
  let prev = '<s>';
  let opening = '';
  // With the WordNet classes read, the stream starts past the lead-ins and "never", "always",
  // "please", as the opening features do: "Never close a case" reads as "close a case".
  const from = readLexical ? leadLength(words) : 0;
  for (let i = from; i < words.length; i++) {
    let shape = wordClass(words[i] as string);
    if (shape === 'nv') shape = nounOrVerb(prev, i > 0 ? (words[i - 1] as string) : '');
    // Two plain words in a row are most of any sentence: the pair tells nothing, and read as
    // a feature it worked as a second bias toward "instruction".
    if (prev !== 'w' || shape !== 'w') feature(false, 'sb:', prev, shape);
    if (i - from < 3) opening = i === from ? shape : `${opening} ${shape}`;
    prev = shape;
  }
  feature(false, 'sb:', prev, '</s>');
  feature(false, 'sbp:', position, opening);
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
function numbersOf(feature: AddFeature, text: string, words: readonly string[]): void {
  let count = 0;
  for (const word of words) if (word === '<num>') count++;
  feature(false, 'num:', String(Math.min(3, count)));
  if (/[$€£]\d/.test(text)) feature(false, 'num:', 'money');
}

/** Words that open an imperative without being its verb: the opening read is the word after. */
const ADVERB_LEAD = new Set("never always please don't dont".split(' '));
