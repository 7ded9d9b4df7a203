/**
 * The features of a clause in a chat between people, read by the learned clause model
 * (eval/train-clause-model.ts, an experiment not in src): what a later question tends to ask about (a name, a number, a date, a
 * first-person event, an acquisition or a visit, a rare word), what it seldom asks about
 * (reactions, questions, pleasantries), the hand-weighted value's two parts (rarity and
 * signal), and the turn around it (the other speaker asking before or after it). Dense, a
 * fixed order: {@link CLAUSE_FEATURE_NAMES}.
 */

import { wordRank } from '../src/core/language/word-rarity.js';
import { releaseRegExpCode } from '../src/core/process-caches.js';

/** The names of the features, in the order {@link clauseFeatures} gives them. */
export const CLAUSE_FEATURE_NAMES = [
  'bias',
  'log rarity',
  'log signal',
  'number',
  'calendar word',
  'resolved date',
  'named',
  'names (log)',
  'first person',
  'event verb',
  'acquire / visit / start',
  'family',
  'my + noun',
  'question',
  'exclamation',
  'reaction',
  'to the other',
  'photo caption',
  'words (log)',
  'rare words (log)',
  'no information',
  'asked before',
  'asked after',
  'time phrase',
  'recency',
  'recurring theme',
  'negation',
  'plural we',
] as const;

/** What scoring already knows about a clause. */
export interface ClauseInput {
  text: string;
  words: readonly string[];
  /** The clause's rarity (the sum of its words' weights). */
  rarity: number;
  /** The hand-weighted signal multiplier. */
  signal: number;
  /** Carries no name, number, date or rare word. */
  empty: boolean;
  /** Capitalized words past the first that are no speaker's name. */
  names: number;
  /** The other speaker's previous clause is a question. */
  askedBefore: boolean;
  /** The other speaker's next clause is a question. */
  askedAfter: boolean;
  /** Position in the units, 0 to 1. */
  recency: number;
  /** Every word of it said in several other clauses. */
  theme: boolean;
}

const NUMBER =
  /\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|hundred|first|second|third)\b/i;
const CALENDAR =
  /\b(?:jan(?:uary)?|feb(?:ruary)?|march|april|may|june|july|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|birthday|summer|winter|spring|christmas)\b/i;
const RESOLVED = /\((?:the (?:week|weekend) (?:of|before|after) )?(?:\d{1,2} )?(?:[A-Z][a-z]{2,8} )?\d{4}\)/;
const FIRST =
  /^(?:i|we|my|our)\b|\b(?:i|we) (?:am|was|were|have|had|went|got|started|decided|bought|made|took|joined|moved|visited|finished|tried|learned|used|did|saw|met|love|loved)\b/i;
const EVENT =
  /\b(?:adopted|named|booked|bought|started|moved|signed up|finished|decided|married|engaged|graduated|hired|promoted|born|ran|won|visited|diagnosed|enrolled|quit|sold|joined|lost|painted|wrote|read|volunteered|attended|traveled|travelled)\b/i;
const ACQUIRE =
  /\b(?:got|get|getting|bought|buy|received|gave|gift|went|go(?:ing)? to|trip|visit(?:ed|ing)?|start(?:ed|ing)?|began|begin|join(?:ed|ing)?|took up|picked up|learn(?:ed|ing)?|class(?:es)?|course|competition|concert|festival|event|conference|workshop)\b/i;
const FAMILY =
  /\b(?:mom|mother|dad|father|sister|brother|son|daughter|kids?|children|husband|wife|partner|friends?|family|grandma|grandpa|aunt|uncle|cousin|dog|cat|pet|puppy)\b/i;
const MY_NOUN = /\bmy (?!own\b|god\b|goodness\b)[a-z]+/i;
const QUESTION = /\?["'”’)]*$/;
const EXCLAMATION = /!["'”’)]*$/;
const REACTION =
  /\b(?:wow|awesome|amazing|congrats|congratulations|cool|great|nice|sounds|glad|sorry|proud|love that|thanks|thank you|haha|lol|omg|yay|good luck|take care|hope)\b/i;
const TO_OTHER = /^(?:you|your|you're|you’re|you've|you’ve|you'll|you’ll|yours|that's|that is|it's|it is)\b/i;
const PHOTO = /\[shared /;
const TIME =
  /\b(?:ago|last (?:week|month|year|weekend|night)|next (?:week|month|year)|since|years?|months?|weeks?|recently|lately|yesterday|tomorrow)\b/i;
const NEGATION = /\b(?:not|never|no|don't|didn't|can't|won't|n't)\b/i;
const WE = /\b(?:we|our|us)\b/i;

const bit = (x: boolean) => (x ? 1 : 0);

/** The features of a clause, in the order of {@link CLAUSE_FEATURE_NAMES}. */
export function clauseFeatures(input: ClauseInput): number[] {
  const { text, words } = input;
  let rare = 0;
  for (const word of words) if (wordRank(word) > 3000) rare++;
  return [
    1,
    Math.log1p(input.rarity),
    Math.log(Math.max(1e-3, input.signal)),
    bit(NUMBER.test(text)),
    bit(CALENDAR.test(text)),
    bit(RESOLVED.test(text)),
    bit(input.names > 0),
    Math.log1p(input.names),
    bit(FIRST.test(text)),
    bit(EVENT.test(text)),
    bit(ACQUIRE.test(text)),
    bit(FAMILY.test(text)),
    bit(MY_NOUN.test(text)),
    bit(QUESTION.test(text)),
    bit(EXCLAMATION.test(text)),
    bit(REACTION.test(text)),
    bit(TO_OTHER.test(text)),
    bit(PHOTO.test(text)),
    Math.log1p(words.length),
    Math.log1p(rare),
    bit(input.empty),
    bit(input.askedBefore),
    bit(input.askedAfter),
    bit(TIME.test(text)),
    input.recency,
    bit(input.theme),
    bit(NEGATION.test(text)),
    bit(WE.test(text)),
  ];
}

/** True when a clause ends with a question mark. */
export const isQuestion = (text: string): boolean => QUESTION.test(text);

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(
  NUMBER,
  CALENDAR,
  RESOLVED,
  FIRST,
  EVENT,
  ACQUIRE,
  FAMILY,
  MY_NOUN,
  QUESTION,
  EXCLAMATION,
  REACTION,
  TO_OTHER,
  PHOTO,
  TIME,
  NEGATION,
  WE,
);

/** The model's probability that a clause with `features` holds a later question's answer. */
export function clauseProbability(features: readonly number[], weights: readonly number[]): number {
  let z = 0;
  for (let i = 0; i < features.length; i++) z += (weights[i] ?? 0) * features[i]!;
  return 1 / (1 + Math.exp(-z));
}
