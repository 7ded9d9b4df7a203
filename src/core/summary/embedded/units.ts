/**
 * Units: the sentences of a message (the built-in `Intl.Segmenter`, re-joined after
 * abbreviations), split further into clauses, cleaned of interjections, vocatives, emoji
 * and markdown decoration, with greetings, thanks and bare reactions dropped. Every step is
 * a single pass or an anchored pattern: linear on any input.
 */
import { releaseRegExpCode } from '../../process-caches.js';
import type { Steps } from '../../time-slice.js';
import { WEEKDAYS } from './relative-dates.js';
import { MONTHS } from './segments.js';

/** A unit longer than this is cut at whitespace into several (never inside a word). */
export const MAX_UNIT_CHARS = 300;
/** A whitespace-free run longer than this (a blob, a hash dump) is left out of prose units. */
export const MAX_WORD_CHARS = 64;

/** Function words: never content. */
const STOPWORDS = new Set(
  `a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for
from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself
his how how's i i'd i'll i'm i've if in into is isn't it it's its itself just let let's me more most mustn't my
myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she she'd she'll
she's should shouldn't so some such than that that's the their theirs them themselves then there there's these they
they'd they'll they're they've this those through to too under until up upon us very was wasn't we we'd we'll we're
we've were weren't what what's when when's where where's which while who who's whom why why's will with won't would
wouldn't you you'd you'll you're you've your yours yourself yourselves must might may shall get got gets getting go
going goes gone went come came make made take took way well yet still even ever also back now just like really one
ones thing things something anything everything nothing lot lots much many kind sort bit maybe perhaps though
although however actually basically literally quite pretty rather okay ok yes yeah yep nope hey hi hello oh ah wow
lol haha hmm um uh`.split(/\s+/),
);

/** Words of reaction and small talk: they make no fact on their own. */
const REACTION_WORDS = new Set(
  `fun great awesome amazing cool nice wonderful lovely beautiful fantastic incredible glad happy sad sorry sure
totally definitely absolutely thanks thank welcome love loved proud excited exciting interesting wait hear heard
sounds sound good bad best better cute sweet hope hopefully stuff inspiring inspired inspire impressive congrats
congratulations enjoy enjoyed enjoying appreciate appreciated means mean awesome agree true right exactly glad
tell told say said think thought feel feels felt know knew see seen look looks looking talk talking chat chatting
wish wishes luck care soon bye goodbye morning night day tonight`.split(/\s+/),
);

/** The ASCII-only fast path of a word test: letters, digits and inner ' - _. */
const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;

/**
 * The distinct lowercase content words of `text`: words that are neither function words nor
 * small talk, plus any token with a digit. Possessive `'s` is dropped.
 */
export function contentWords(text: string): string[] {
  const out = new Set<string>();
  for (const match of text.matchAll(WORD)) {
    let word = match[0].toLowerCase();
    // Long words are blobs, unless they are codes (a UUID is 36 characters).
    if (word.length > 30 && (word.length > MAX_WORD_CHARS || !/\d/.test(word))) continue;
    if (word.endsWith("'s") || word.endsWith('’s')) word = word.slice(0, -2);
    word = word.replace(/[’]/g, "'").replace(/[-'_]+$/, '');
    if (!word) continue;
    const hasDigit = /\d/.test(word);
    if (!hasDigit && (word.length < 3 || STOPWORDS.has(word) || REACTION_WORDS.has(word))) continue;
    out.add(word);
  }
  return [...out];
}

let sentenceSegmenter: Intl.Segmenter | undefined;

/**
 * Builds the sentence segmenter if the process has none, a step after each piece of ICU's
 * one-time load. Built at once, the first segmenter loads the locales and break rules in one
 * piece (~14-20 ms of CPU); asked for first, the likely-subtags data, the collator's and then
 * the segmenter's available locales are each loaded in a piece of their own (~4, ~9 and ~2 ms),
 * and the segmenter then takes ~0.3 ms. Nothing when the segmenter exists.
 */
export function* warmSentenceSegmenterSteps(): Steps<void> {
  if (sentenceSegmenter !== undefined) return;
  new Intl.Locale('en').maximize();
  yield;
  Intl.Collator.supportedLocalesOf(['en']);
  yield;
  Intl.Segmenter.supportedLocalesOf(['en']);
  yield;
  sentenceSegmenter ??= new Intl.Segmenter('en', { granularity: 'sentence' });
  yield;
}

/** Abbreviations after which a sentence does not end (checked on the segment's last characters). */
const ABBREVIATION_END =
  /(?:^|[\s(])(?:mr|mrs|ms|dr|prof|st|sr|jr|vs|etc|e\.g|i\.e|approx|no|fig|inc|ltd|co|mt|dept|u\.s|[a-z])\.$/i;

/**
 * The characters after which the sentence segmenter (Unicode's sentence breaks) may end a
 * sentence: terminators (`.`-like ones included) and separators. A line without any is one
 * sentence, without a call to the segmenter.
 */
const SENTENCE_BREAK = /[\p{Sentence_Terminal}.\u2024\uFE52\uFF0E\r\u0085\u2028\u2029]/u;

/**
 * Splits text into sentences: lines first (lists, code, log lines are lines), then the
 * built-in sentence segmenter, re-joining a sentence that ended on an abbreviation. A line
 * with no terminator is a sentence as it is: the segmenter took 8 µs a line of 100k messages
 * ("hi 1"; 0.8 s of the call), and the profile's longest gap (20-28 ms) was in its callers,
 * most of it V8's "(program)" time (native, not a GC pause); gone with this shortcut.
 */
export function splitSentences(text: string): string[] {
  sentenceSegmenter ??= new Intl.Segmenter('en', { granularity: 'sentence' });
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (!SENTENCE_BREAK.test(line)) {
      out.push(line.trim());
      continue;
    }
    let pending = '';
    for (const { segment } of sentenceSegmenter.segment(line)) {
      pending += segment;
      if (ABBREVIATION_END.test(pending.trimEnd().slice(-12))) continue;
      if (pending.trim()) out.push(pending.trim());
      pending = '';
    }
    if (pending.trim()) out.push(pending.trim());
  }
  return out;
}

/** Clause boundaries: a spaced dash, a semicolon, or a comma before but / and / so / which. */
const CLAUSE_BREAK = /\s[—–-]\s|;\s|,\s(?=(?:but|and|so|which)\s)/g;
/**
 * Clause boundaries of a chat (no tool call), finer: a spaced dash, a semicolon, any comma,
 * "and / but / so" before a new subject ("and it was", "but I"), "because / since / which
 * / while / when", and before a bracketed aside in words (a shared photo's caption: `[shared a
 * photo of ...]`, 15-20 tokens riding on the fact before it; not a tool's `[File: x.py]` or a
 * code index). Selection then keeps the clause that carries the fact ("I went to a
 * counseling workshop") without the one that does not ("and it was really enlightening").
 * Agent transcripts keep the coarse breaks: a fact there (a path, a setting, a decision with
 * its reason) often spans a comma.
 */
const PROSE_CLAUSE_BREAK =
  /\s[—–-]\s|;\s|,\s|\s(?=\[[a-z][a-z ,'-]{2,200}\](?:\s|$))|\s(?=(?:and|but|so) (?:i|we|it|he|she|they|that|this)\s)|\s(?=(?:because|since|which|while|when)\s)/gi;

/**
 * Code and data (calls, assignments, markup, escapes): their commas separate no clauses. A
 * resolved date's brackets (`yesterday (7 May 2023)`) and a path's slash are no code.
 */
const CODE_CHARS = /[{}=<>`|\\]|\w\(/;

/**
 * Splits a sentence into clauses (verbatim substrings); `prose` (a chat: no tool call) uses
 * {@link PROSE_CLAUSE_BREAK} on a sentence without code characters. A clause of fewer than three words stays with its neighbour.
 */
export function splitClauses(sentence: string, prose = false): string[] {
  const parts: string[] = [];
  let start = 0;
  const breaks = prose && !CODE_CHARS.test(sentence) ? PROSE_CLAUSE_BREAK : CLAUSE_BREAK;
  for (const match of sentence.matchAll(breaks)) {
    const end = match.index;
    // The clause keeps its own punctuation (`;`, `,`, a dash), so joined clauses read as written.
    const piece = sentence.slice(start, end + match[0].trimEnd().length).trim();
    const rest = sentence.slice(end + match[0].length).trim();
    if (wordCount(piece) >= 3 && wordCount(rest) >= 3) {
      parts.push(piece);
      start = end + match[0].length;
    }
  }
  parts.push(sentence.slice(start).trim());
  return parts.filter((p) => p.length > 0);
}

function wordCount(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = text.charCodeAt(i) <= 32;
    if (!space && !inWord) count++;
    inWord = !space;
  }
  return count;
}

const INTERJECTIONS =
  /^(?:(?:oh|ah+|aw+|wow|well|hey|hi|hello|haha+|hah|lol|omg|yeah|yep|yes|no|nope|ok|okay|hmm+|um+|uh|so|anyway|gosh|whoa|ooh|yay|sure|alright|also|btw)\b[\s,!.…:-]*)+/i;
/**
 * A leading vocative (`Caroline, ...`): a capitalized word and a comma, the clause going on in
 * lower case or with "I" (`Edinburgh, Scotland ...` and `Python, Rust and Go ...` are not
 * addressed to anyone), or the word alone; never a word that carries a date or a time.
 */
const VOCATIVE = /^([A-Z][a-z]{1,15})(?:[,!]\s+(?=[a-z]|I\b|I['’])|[,!.]?$)/;
const TIME_WORDS = new Set([
  'Yesterday',
  'Today',
  'Tomorrow',
  'Tonight',
  'Recently',
  'Lately',
  'Later',
  'Then',
  ...WEEKDAYS.map((day) => day[0]!.toUpperCase() + day.slice(1)),
  ...MONTHS,
]);
const DECORATION = /^(?:[#>*+•-]+\s+|\d{1,3}[.)]\s+)+/;
const EMOJI = /\p{Extended_Pictographic}|\u{FE0F}|\u{200D}|[\u{1F3FB}-\u{1F3FF}]/gu;

/** Strips leading interjections, vocatives, emoji and markdown decoration from a unit. */
export function cleanUnit(text: string): string {
  let out = text.replace(EMOJI, '').replaceAll('**', '').trim();
  out = out.replace(DECORATION, '');
  out = out.replace(INTERJECTIONS, '');
  const vocative = VOCATIVE.exec(out);
  if (vocative && !TIME_WORDS.has(vocative[1]!)) out = out.slice(vocative[0].length);
  return out.trim();
}

/** Openers of greetings, thanks and bare reactions. */
const PHATIC_OPENER =
  /^(?:thanks|thank you|thx|you're welcome|you’re welcome|no problem|no worries|sounds good|good (?:morning|night|luck|evening|afternoon)|see you|see ya|talk (?:soon|later)|take care|bye|goodbye|congrats|congratulations|that's|that’s|that is|that was|that must|that sounds|it's so|it’s so|glad|happy to hear|sorry to hear|so happy|me too|same here|of course|definitely|absolutely|totally|i'm so happy|i’m so happy|how are you|how's it going|how have you been|nice to|great to|good to|can't wait|can’t wait|love (?:it|that|this)|what a)\b/i;

/**
 * True for a unit that carries no fact: no content word and no number, or a short
 * greeting, thanks or reaction.
 */
export function isPhatic(text: string, words: readonly string[] = contentWords(text)): boolean {
  if (words.length === 0) return true;
  return PHATIC_OPENER.test(text) && words.length <= 1 && wordCount(text) <= 10;
}

/** Cuts an over-long unit at whitespace, leaving whitespace-free runs longer than {@link MAX_WORD_CHARS} out. */
export function chunkLong(text: string): string[] {
  if (text.length <= MAX_UNIT_CHARS && !hasLongRun(text)) return [text];
  const chunks: string[] = [];
  let current = '';
  for (const token of text.split(/\s+/)) {
    if (token.length === 0 || token.length > MAX_WORD_CHARS) continue;
    if (current.length + token.length + 1 > MAX_UNIT_CHARS && current) {
      chunks.push(current);
      current = '';
    }
    current = current ? `${current} ${token}` : token;
  }
  if (current) chunks.push(current);
  return chunks;
}

function hasLongRun(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    run = text.charCodeAt(i) <= 32 ? 0 : run + 1;
    if (run > MAX_WORD_CHARS) return true;
  }
  return false;
}

/** A unit of text with its content words. */
export interface TextUnit {
  text: string;
  words: string[];
}

/** All the units of a message text, cleaned, with small talk dropped (`prose`: see {@link splitClauses}). */
export function textUnits(text: string, prose = false): TextUnit[] {
  const out: TextUnit[] = [];
  for (const sentence of splitSentences(text)) {
    for (const chunk of chunkLong(sentence)) {
      for (const clause of splitClauses(chunk, prose)) {
        const cleaned = cleanUnit(clause);
        if (!cleaned) continue;
        const words = contentWords(cleaned);
        if (isPhatic(cleaned, words)) continue;
        out.push({ text: cleaned, words });
      }
    }
  }
  return out;
}

/** A run of base64 or token characters. */
const KEY_CHARS = /^[A-Za-z0-9+/=_-]+$/;

/**
 * True when `line` is key material (a key's body lines, pasted tokens): runs of base64 or token
 * characters only, most of it in runs of 16 or more (a clipped tail may be shorter).
 */
function isKeyMaterial(line: string): boolean {
  let long = 0;
  let total = 0;
  for (const run of line.split(/\s+/, 64)) {
    if (run === '') continue;
    if (!KEY_CHARS.test(run)) return false;
    total += run.length;
    if (run.length >= 16) long += run.length;
  }
  return total > 0 && long >= 0.8 * total;
}

/** Characters of one tool result read for excerpts. */
const MAX_EXCERPT_CHARS = 12_000;
/** Excerpt units taken from one tool result. */
const MAX_EXCERPTS = 120;
/** A placeholder the pipeline left for a cleared result: nothing to quote. */
const PLACEHOLDER = /^\s*\[(?:cleared|agent-compaction)\b/;

/**
 * Lines of a tool result as units, in order: what the summary quotes when room is left after
 * every other unit (a large result folded whole leaves the view under its target otherwise).
 */
export function excerptUnits(output: string | undefined): TextUnit[] {
  if (!output || PLACEHOLDER.test(output)) return [];
  const head = output.length > MAX_EXCERPT_CHARS ? output.slice(0, MAX_EXCERPT_CHARS) : output;
  const out: TextUnit[] = [];
  for (const line of head.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.length < 8) continue;
    for (const chunk of chunkLong(trimmed)) {
      const words = contentWords(chunk);
      // Key material (a key's body line, a pasted token) says nothing a summary needs, and
      // quoted apart from its armor the redactor could not tell it is a key.
      if (words.length === 0 || isKeyMaterial(chunk)) continue;
      out.push({ text: chunk, words });
      if (out.length >= MAX_EXCERPTS) return out;
    }
  }
  return out;
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(
  WORD,
  ABBREVIATION_END,
  SENTENCE_BREAK,
  CLAUSE_BREAK,
  PROSE_CLAUSE_BREAK,
  CODE_CHARS,
  INTERJECTIONS,
  VOCATIVE,
  DECORATION,
  EMOJI,
  PHATIC_OPENER,
  KEY_CHARS,
  PLACEHOLDER,
);
