/**
 * Value by content, not by keyword: the rarity (inverse document frequency within the
 * conversation) of a unit's distinct content words, multiplied by signals. Titles, numbers
 * and dates, first-person statements, events and decisions, proper nouns and identifiers raise
 * it; questions, remarks to the other speaker, sympathy, pleasantries and bare exclamations
 * lower it, and a theme that keeps coming back collapses (issue 35: facts get the room small
 * talk had). In agent transcripts the user's words outrank the
 * assistant's prose, tool facts and state-changing calls rank high, failures higher,
 * scratchpad calls near zero. A small bonus goes to recent units.
 */

import { ChunkedList } from '../../chunked-list.js';
import { type FoundIdentifier, findIdentifiers } from '../../language/key-identifiers.js';
import { generalRarity, wordRank, wordRankSteps } from '../../language/word-rarity.js';
import { onProcessCachesRelease, releaseRegExpCode } from '../../process-caches.js';
import { ShardedMap } from '../../sharded-map.js';
import { runSteps, type Steps } from '../../time-slice.js';
import type { Unit, WordRarities } from './types.js';

/** Inverse document frequency of each content word over `units` (each unit a document). */
export function inverseDocumentFrequency(units: readonly Pick<Unit, 'words'>[]): WordRarities {
  const df = new ShardedMap<number>();
  for (const unit of units) for (const word of unit.words) df.set(word, (df.get(word) ?? 0) + 1);
  return runSteps(idfSteps(df, units.length));
}

/** Words given their rarity between two steps of {@link idfSteps}. */
const IDF_WORDS_PER_STEP = 4096;

/**
 * The rarity of each word from its document frequency `df` over `n` units, a step every
 * {@link IDF_WORDS_PER_STEP} words (200k distinct words, "hi 1" to "hi 200000", took 40 ms).
 */
function* idfSteps(df: ShardedMap<number>, n: number): Steps<ShardedMap<number>> {
  const idf = new ShardedMap<number>();
  let words = 0;
  for (const [word, count] of df.entries()) {
    idf.set(word, Math.log(1 + Math.max(1, n) / count));
    if (++words % IDF_WORDS_PER_STEP === 0) yield;
  }
  return idf;
}

const QUOTED = /["“][^"”\n]{2,80}["”]|(?:^|\s)'[^'\n]{2,60}'(?=[\s.,!?;:]|$)/;
const HAS_NUMBER = /\d/;
const DATE_WORD =
  /\b(?:jan(?:uary)?|feb(?:ruary)?|march|april|june|july|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|tomorrow|weekend|birthday|anniversary)\b/i;
const FIRST_PERSON =
  /^(?:i|we|my|our|i'm|i’m|i've|i’ve|i'll|i’ll|i'd|we're|we’re|we've|we'll)\b|\b(?:i|we) (?:am|was|were|have|had|will|went|got|started|decided|bought|adopted|love|like|prefer|plan|planned|want|need|took|made|finished|joined|moved|visited|signed|use|chose|read|play|work|just|recently|also|really)\b/i;
const COMMITMENT =
  /\b(?:must|never|do not|don't|only|always|decided|decision|instead of|rather than|because|todo|blocked|remaining|follow-up|next step|deadline|constraint|required|still open)\b/i;
const QUESTION = /\?["'”’)]*$/;
/**
 * Sympathy, reactions and pleasantries: "That must have been amazing!", "It is so important
 * to slow down sometimes.", "Hope you got some rest". They hold no fact a later turn asks about.
 */
const PLEASANTRY =
  /\b(?:must have been|must be so|sounds? (?:so |really |absolutely |pretty )?(?:amazing|awesome|great|wonderful|fun|hard|rough|tough|lovely|exciting|scary|nice)|(?:i'?m|i am) so (?:sorry|happy|glad|proud)|so (?:happy|proud) (?:for|of) you|hope you|it(?:'s| is) (?:so |really |very )?important to|can only imagine|take care|means a lot|you (?:are|'re) the (?:best|sweetest))\b/i;
/**
 * Signal of a dated event between people (a relative date resolved to another day: "I went to
 * a support group yesterday (7 May 2023)"): what a later "when did ..." asks about. Units
 * that only say today, tonight or this morning get nothing: their heading already dates them.
 */
const DATED_EVENT_WEIGHT = 1.8;
/**
 * A relative date resolved against its message's date (`yesterday (7 May 2023)`, `last month
 * (April 2023)`, `last week (the week before 8 May 2023)`) that is not the message's own day.
 */
const RESOLVED_DATE =
  /\b(?:yesterday|tomorrow|(?:last|next|this past|this coming) (?:sunday|monday|tuesday|wednesday|thursday|friday|saturday|weekend|week|month|year)|ago) \((?:the (?:week|weekend) (?:of|before|after) )?(?:\d{1,2} )?(?:[A-Z][a-z]{2,8} )?\d{4}\)/i;
/** An exclamation: feeling, not fact (unless it names a number, a date or a name). */
const EXCLAMATION = /!["'”’)]*$/;
/** Events and decisions: who did what (adopted, booked, started, moved, decided ...). */
const EVENT =
  /\b(?:adopted|named|called|booked|bought|started|moved|signed up|got the keys|finished|decided|married|engaged|graduated|hired|promoted|born|had a baby|ran|won|visited|diagnosed|allergic|enrolled|quit|sold|joined)\b/i;
const SECOND_PERSON = /^(?:you|your|you're|you’re|you've|you’ve|you'll|you’ll|yours)\b/i;

const NO_SPEAKER = () => false;

/** Tells a speaker's name: `word` as written (a capital first), or any case. */
export type SpeakerName = (word: string) => boolean;

/**
 * The speakers' names in a chat between people, and as written (capitalized) their first three
 * letters or more ("Mel" for Melanie): said to the other person ("No worries, Mel!"), a name
 * tells no fact (the line's `Name:` says who spoke). A lowercase word is a name only in full
 * ("car" is no Caroline).
 */
export function speakerNames(speakers: Iterable<string>): SpeakerName {
  const full = new Set<string>();
  const prefixes = new Set<string>();
  for (const speaker of speakers) {
    const name = speaker.toLowerCase();
    if (name.length < 3 || full.has(name)) continue;
    full.add(name);
    for (let n = 3; n <= Math.min(name.length, 32); n++) prefixes.add(name.slice(0, n));
  }
  if (full.size === 0) return NO_SPEAKER;
  return (word) => {
    const bare = word.replace(/['’]s$/, '');
    const lower = bare.toLowerCase();
    if (full.has(lower)) return true;
    const c = bare.charCodeAt(0);
    return c >= 65 && c <= 90 && prefixes.has(lower);
  };
}

/** True when `word` (lowercase, a unit's content word) is a speaker's name in `text`: in full, or capitalized there. */
function spokenName(word: string, text: string, speaker: SpeakerName): boolean {
  if (speaker === NO_SPEAKER) return false;
  if (speaker(word)) return true;
  const written = word.charAt(0).toUpperCase() + word.slice(1);
  return speaker(written) && text.includes(written);
}

/** Capitalized words past the first that are not `I`: names of people, places, things. */
function hasProperNoun(text: string, speaker: SpeakerName = NO_SPEAKER): boolean {
  let first = true;
  for (const match of text.matchAll(/[\p{L}][\p{L}'’-]*/gu)) {
    const word = match[0];
    if (!first && word !== 'I' && !word.startsWith("I'") && !word.startsWith('I’') && !speaker(word)) {
      const c = word.charCodeAt(0);
      if (c >= 65 && c <= 90 && word.length > 1) return true;
    }
    first = false;
  }
  return false;
}

/** A word ranked past this in general English is rare: it carries information. */
export const RARE_WORD_RANK = 3000;
/** Value factor of a unit that carries no information (in a chat between people). */
const EMPTY_WEIGHT = 0.15;

/**
 * True when a unit carries information: a number, a date word, a proper noun, or a word
 * rare in general English (ranked past {@link RARE_WORD_RANK} in the shipped table). A unit
 * without any ("It was so much fun.", "Keep it up!") is small talk.
 */
export function carriesInformation(
  text: string,
  words: readonly string[],
  speaker: SpeakerName = NO_SPEAKER,
): boolean {
  if (HAS_NUMBER.test(text) || DATE_WORD.test(text) || hasProperNoun(text, speaker)) return true;
  return words.some((word) => wordRank(word) > RARE_WORD_RANK && !spokenName(word, text, speaker));
}

/** Identifiers of a unit (the first ones) that can raise its signal. */
const SIGNAL_IDS = 8;
/** Identifiers of a unit counted for rarity. */
const COUNTED_IDS = 16;

/** True for an identifier named in few units (a path named everywhere is no key fact). */
export type RareId = (id: string) => boolean;
const ANY_ID: RareId = () => true;
/** An identifier in more units than this is common. */
const RARE_ID_UNITS = 3;

/**
 * The signal multiplier of a text unit (message prose). `found`: the unit's identifiers in
 * order, when the caller has them (at least the first {@link SIGNAL_IDS}).
 */
export function textSignal(
  text: string,
  source: Unit['source'],
  agentic: boolean,
  rare: RareId = ANY_ID,
  found: readonly FoundIdentifier[] = findIdentifiers(text, SIGNAL_IDS),
): number {
  let m = 1;
  if (QUOTED.test(text)) m *= 1.5;
  if (HAS_NUMBER.test(text) || DATE_WORD.test(text)) m *= 1.3;
  if (FIRST_PERSON.test(text)) m *= 1.4;
  if (hasProperNoun(text)) m *= 1.2;
  if (COMMITMENT.test(text)) m *= 1.2;
  for (let i = 0; i < Math.min(SIGNAL_IDS, found.length); i++)
    if (rare(found[i]!.text)) {
      m *= 1.5;
      break;
    }
  if (!agentic && RESOLVED_DATE.test(text)) m *= DATED_EVENT_WEIGHT;
  if (QUESTION.test(text)) m *= 0.3;
  if (PLEASANTRY.test(text)) m *= 0.3;
  else if (EXCLAMATION.test(text) && !HAS_NUMBER.test(text) && !hasProperNoun(text)) m *= 0.5;
  if (EVENT.test(text)) m *= 1.3;
  if (SECOND_PERSON.test(text) && !FIRST_PERSON.test(text)) m *= 0.5;
  if (agentic) {
    if (source === 'user') m *= 1.3;
    else if (source === 'assistant') m *= 0.8;
  }
  return m;
}

/** A shared photo's caption in a chat (`[shared a photo of a dog on a beach]`). */
const SHARED_PHOTO = /\[shared [^\]]{0,300}\]/;
/** Factor of a clause naming a person, a place or a title, in a chat between people. */
export const PEOPLE_NAMED_WEIGHT = 3;
/** Factor of a clause carrying a shared photo's caption, in a chat between people. */
export const PEOPLE_PHOTO_WEIGHT = 0.5;

/**
 * The signal of a clause in a chat between people: {@link textSignal}'s, with what a later
 * question asks about most often, a name (a person, a place, a title: "I loved 'Becoming
 * Nicole' by Amy Ellis Nutt") or a date (a resolved relative date's month counts as one),
 * weighed {@link PEOPLE_NAMED_WEIGHT} times, and a resolved date's own weight taken back: a
 * dated clause no longer outranks a named one. A shared photo's caption seldom holds the
 * answer: its names count for nothing and the clause weighs less. On the LoCoMo tuning chats
 * at 1/8 the short answers kept rose from 30.5% to 34.7%. `speaker` tells the speakers' own
 * names ({@link speakerNames}): said to the other ("Agreed, Mel!"), a name is no fact (mean
 * over 1/7.8, 1/8 and 1/8.2: tuning chats 34.4% to 35.1% kept, held-out 31.4% to 32.5%).
 */
export function peopleSignal(
  text: string,
  rare: RareId = ANY_ID,
  found: readonly FoundIdentifier[] = findIdentifiers(text, SIGNAL_IDS),
  speaker: SpeakerName = NO_SPEAKER,
): number {
  let m = textSignal(text, 'user', false, rare, found);
  if (RESOLVED_DATE.test(text)) m /= DATED_EVENT_WEIGHT;
  const photo = SHARED_PHOTO.exec(text);
  if (hasProperNoun(photo ? text.replace(photo[0], '') : text, speaker)) m *= PEOPLE_NAMED_WEIGHT;
  if (photo) m *= PEOPLE_PHOTO_WEIGHT;
  return m;
}

/** The signal multiplier of a tool fact unit. */
export function toolSignal(tool: NonNullable<Unit['tool']>, text: string, rare: RareId = ANY_ID): number {
  // A scratchpad call (`think`) records no fact about the world: never worth a line.
  if (tool.scratch) return 0;
  let m = 1.5;
  // A result the pipeline cleared says only that the call happened.
  if (text.endsWith(')') && text.includes(' → (cleared')) m *= 0.3;
  // Ids the result reveals (not those the call was given) are what later steps need.
  const arrow = text.indexOf(' → ');
  const given = text.slice(0, Math.max(0, arrow));
  if (
    arrow >= 0 &&
    findIdentifiers(text.slice(arrow), 8).some((f) => !given.includes(f.text) && rare(f.text))
  )
    m *= 2;
  if (tool.stateChanging) m *= 1.8;
  if (tool.failed) m *= 2;
  if (tool.superseded) m *= 0.2;
  return m;
}

/** Options of {@link scoreUnits}. */
export interface ScoreOptions {
  /** True when the conversation has tool calls: the agent weights apply. */
  agentic: boolean;
  /** True for a chat between named people (no tool call): {@link peopleSignal} applies. */
  people?: boolean;
}

/** A unit all of whose words are in at least this many units is a recurring theme. */
const THEME_UNITS = 3;
/** Weight of a word common in general English, next to 1 more for one the table does not hold. */
const GENERAL_FLOOR = 1;
/** Value factor of an excerpt unit: below any unit of the conversation. */
const FILLER_WEIGHT = 0.01;
const NUMERIC = /^[\d.,:/-]+$/;
/**
 * The pieces a timestamp leaves as words (`2025-03-24T17:18:12Z` gives `2025-03-24t17`, `18`,
 * `12z`): numbers, though they hold a letter.
 */
const TIMESTAMP_PIECE = /^\d{4}-\d{2}-\d{2}t\d{1,2}$|^\d{1,2}z$/;
const LETTER = /\p{L}/u;

/**
 * Bare numbers (counters, line numbers, log fields, a timestamp's pieces) are rare by chance:
 * they count less (a log line's time made it outrank a user's stated limit in rolling
 * compaction). Codes mixing letters and digits (ids, keys, versions) count double.
 */
export function wordWeight(word: string): number {
  if (NUMERIC.test(word) || TIMESTAMP_PIECE.test(word)) return 0.3;
  return /\d/.test(word) && LETTER.test(word) ? 2 : 1;
}
const normalize = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();

/**
 * Sets `value` on every unit. A unit repeated verbatim keeps its value only at its last
 * occurrence. Returns the rarity table for selection's novelty discount.
 */
export function scoreUnits(units: Unit[], options: ScoreOptions): WordRarities {
  return runSteps(scoreUnitSteps(units, options));
}

/** {@link scoreUnits} as {@link Steps}: a pause every few dozen units. */
export function* scoreUnitSteps(units: Unit[], options: ScoreOptions): Steps<WordRarities> {
  // A fresh process's first summary: the rank table of general English and the signals'
  // expressions are built in steps.
  yield* wordRankSteps();
  yield* compileSignalSteps();
  // A pause every few units: a long tool excerpt's unit takes tens of microseconds to scan.
  let work = 0;
  // Sharded: a map of 300k words grown in one call held the loop 30 ms.
  const df = new ShardedMap<number>();
  const last = new ShardedMap<Unit>();
  let maxOrder = 1;
  for (const unit of units) {
    if (++work % 64 === 0) yield;
    for (const word of unit.words) df.set(word, (df.get(word) ?? 0) + 1);
    last.set(normalize(unit.text), unit);
    maxOrder = Math.max(maxOrder, unit.order);
  }
  const idf = yield* idfSteps(df, units.length);
  yield;
  const idUnits = new ShardedMap<number>();
  // Each unit's identifiers, found once: counted here, read again by its signal.
  const unitIds = new ChunkedList<FoundIdentifier[]>();
  for (const unit of units) {
    if (++work % 8 === 0) yield;
    const ids = findIdentifiers(unit.text, COUNTED_IDS);
    unitIds.push(ids);
    for (const found of ids) idUnits.set(found.text, (idUnits.get(found.text) ?? 0) + 1);
  }
  const rare: RareId = (id) => (idUnits.get(id) ?? 0) <= RARE_ID_UNITS;
  // Between people, the speakers' own names are no information (a name said to the other).
  const speaker = options.people
    ? speakerNames(units.filter((u) => !u.tool && !u.filler).map((u) => u.speaker))
    : NO_SPEAKER;
  for (let index = 0; index < units.length; index++) {
    const unit = units[index]!;
    if (++work % 8 === 0) yield;
    if (last.get(normalize(unit.text)) !== unit) {
      unit.value = 0;
      continue;
    }
    let rarity = 0;
    // Rare in the conversation and rare in English: "Sweden" outweighs "time" said as seldom.
    for (const word of unit.words)
      if (!spokenName(word, unit.text, speaker))
        rarity += (idf.get(word) ?? 0) * wordWeight(word) * (GENERAL_FLOOR + generalRarity(word));
    // A theme that keeps coming back (every word of it in several other units) collapses: its
    // earlier mentions count for little, the novelty discount does the rest.
    if (!unit.tool && unit.words.length > 0 && unit.words.every((w) => (df.get(w) ?? 0) >= THEME_UNITS))
      rarity *= 0.5;
    const signal = unit.tool
      ? toolSignal(unit.tool, unit.text, rare)
      : options.people && !unit.filler
        ? peopleSignal(unit.text, rare, unitIds.at(index), speaker)
        : textSignal(unit.text, unit.source, options.agentic, rare, unitIds.at(index));
    const recency = 1 + 0.15 * Math.max(0, unit.order / maxOrder);
    // Between people, a line with no name, number, date or rare word is small talk.
    const empty =
      !options.agentic && !unit.tool && !unit.filler && !carriesInformation(unit.text, unit.words, speaker);
    // An excerpt only fills room no other unit can use.
    unit.value = rarity * signal * recency * (unit.filler ? FILLER_WEIGHT : 1) * (empty ? EMPTY_WEIGHT : 1);
  }
  return idf;
}

/** The signals' expressions, each compiled in a step of its own by {@link compileSignalSteps}. */
const SIGNAL_EXPRESSIONS = [
  QUOTED,
  HAS_NUMBER,
  DATE_WORD,
  FIRST_PERSON,
  COMMITMENT,
  QUESTION,
  PLEASANTRY,
  RESOLVED_DATE,
  SHARED_PHOTO,
  EXCLAMATION,
  EVENT,
  SECOND_PERSON,
  NUMERIC,
  TIMESTAMP_PIECE,
  LETTER,
];
let signalsCompiled = false;
onProcessCachesRelease(() => {
  signalsCompiled = false;
});
/** Text for the expressions' first runs (one byte a character, as most text is). */
const SIGNAL_SAMPLE = 'On Monday we decided: "ship it" at 10:30, 2 tests left. Thanks!';

/**
 * Has V8 compile the signals' expressions, a step after each (a first `textSignal` compiled
 * them all in one piece: 12-36 ms of CPU in a fresh process, `DATE_WORD` and `FIRST_PERSON`
 * the largest). Each runs twice: V8 interprets an expression's first run and compiles it to
 * machine code on the next. Nothing when done since the last release of the process's caches.
 */
export function* compileSignalSteps(): Steps<void> {
  if (signalsCompiled) return;
  for (const expression of SIGNAL_EXPRESSIONS) {
    expression.test(SIGNAL_SAMPLE);
    expression.test(SIGNAL_SAMPLE);
    yield;
  }
  signalsCompiled = true;
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(...SIGNAL_EXPRESSIONS);
