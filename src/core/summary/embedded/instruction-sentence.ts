/**
 * Whether a user's sentence is an instruction: it asks the assistant to do, keep, avoid or
 * prefer something (an imperative, "please", "can you ...", "make sure", "don't", "never",
 * "always", "use X not Y", "keep ... in mind", a deadline, an obligation on the work), not a
 * modal verb or "important" in narrative, sympathy, an exclamation or a question about the
 * speaker's life. Tuned and measured on real sentences (test/fixtures/instructions), with a
 * held-out part; every pattern is anchored or linear on any input.
 */

import { isKeyMaterial } from './key-identifiers.js';

/** Longest part of a sentence read (a pasted blob beyond it decides nothing). */
const MAX_CHARS = 600;

/** Verbs whose bare form opening a clause asks the assistant to act. */
const ACTION_VERBS = new Set(
  `act add adjust analyze analyse answer apply archive assume avoid build bump calculate change check choose
clarify classify clean clear compare compile compose compute confirm consider continue convert copy correct create
debug define delete deploy describe design detail develop differentiate discuss document draft draw edit elaborate
email emphasize enable ensure estimate evaluate examine expand explain export extract fill find finish fix focus
follow format generate give google guide handle help highlight identify ignore immerse implement import improve
include insert install introduce investigate issue keep label leave limit link list listen load look make mark
mention merge minimize modify move name navigate note open optimize order organize outline paste pick plan point
prefer prepare present pretend print prioritize proofread propose provide publish pull push put rate read rebase
recite recommend refactor reference refer regale remember remind remove rename reorder repeat rephrase replace reply
report rerun re-run research reset respond restart restore retry return review revert rewrite run save say scan
search select send set setup share shorten show simplify skip solve sort specify split start stick stop structure
suggest summarize summarise switch tag teach tell test track transform translate try turn unscramble update upgrade
upload use validate verify wait walk write imagine cite quote convey commit ship release drop cut reply double-check
come`.split(/\s+/),
);

/** Imperatives that are greetings, reactions or idioms, not requests. */
const PHATIC_IMPERATIVE =
  /^(?:have (?:a|an|fun)|take care|go figure|see (?:you|ya)|look at (?:that|this|you)\b[^,.;]*[!.]?$|imagine (?:that|if|how|what)\b|tell me about it|keep (?:it up|in touch|going)|come on\b|try it (?:sometime|out)\b|don'?t worry\b|never mind|let'?s (?:go|see)\b|make (?:yourself|my day)|go ahead\b|carry on\b|continue\.?$|stop by\b|come (?:over|visit|by)\b)/i;

/** Words before a clause's verb that do not change it: interjections, connectives, politeness. */
const LEAD_IN =
  /^(?:(?:ok|okay|so|and|but|also|then|now|first|firstly|secondly|finally|next|just|oh|hey|hi|hello|well|btw|anyway|alright|right|yes|no|great|thanks|instead|additionally|lastly|maybe|perhaps|plus|again|in addition|one more thing|quick note|heads up|one hard rule)\b[\s,:!.-]*)+/i;

/** A clause that opens with a subordinating word: its modal verbs are not the main claim. */
const SUBORDINATE =
  /^(?:because|since|as|if|when|whenever|while|although|though|whether|that|unless|until|so that)\b/i;

/** Direct requests: "can you ...", "I want you to ...", "help me ...", "we recommend that you ...". */
const REQUEST =
  /\b(?:can|could|would|will)\s+you\s+(?:please\s+|kindly\s+|also\s+|maybe\s+|just\s+|now\s+)?([a-z-]+)|\bi(?:'d| would)? (?:want|need|like|require) you to\b|\bi(?:'d| would) like (?:you|some|something|a|an|the|it)\b|\bi (?:need|want) (?:help|a|an|some|something)\b|\bi require\b|\bhelp me\b|\blet me know\b|\b(?:recommend|suggest|advise|ask) (?:that )?you\b|\byour (?:only |main |first )?(?:job|task|goal|role) is to\b|\byou (?:do not|don't|dont) (?:need|have) to\b/i;

/** Constraints by their words wherever they stand. */
const CONSTRAINT =
  /\b(?:please|pls|kindly|make sure|be sure to|keep\b[^.;!?]{1,60}\bin mind|do not forget|don'?t forget|deadline|due (?:by|on|at|before|today|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|\d)|important(?: that|:)|(?:done|finished|ready|shipped|merged|submitted|delivered) by)\b/i;

/** An obligation: `subject must / should / has to / needs to / can only ... verb`. */
const OBLIGATION =
  /(\b[\w'’]+\s+)?(?:\b(?:must|mustn'?t|should|shouldn'?t|shall|ought to|has to|have to|needs to|need to|cannot|can'?t|can only|may only|may not)\b)(\s+(?:not|never|always|only|also|first|still|now|just|really|definitely|totally|all)\b)?\s+([\w'’-]+)(\s+[\w'’-]+)?/i;

/** A subject whose obligation is narrative: the speaker, other people, a hypothetical. */
const NARRATIVE_SUBJECT =
  /^(?:i|we|he|she|they|people|someone|everyone|who|that|would|could|might|will|i'll|we'll|you'd|i'd|it'd|they'd)\s+$/i;
/** An opening that makes the sentence a question (unless it is a request). */
const QUESTION_OPENER =
  /^(?:(?:what|why|how|who|whom|where|when|which)(?:'s|\s+(?:\w+\s+)?(?:do|did|does|is|are|was|were|have|has|had|can|could|would|will|should|shall)\b)|(?:do|did|does|have|has|had|are|is|was|were|can|could|would|will|should|shall|may|might|isn'?t|aren'?t|wasn'?t|don'?t|didn'?t)\s+(?:you|they|we|i|he|she|it|there|that|this|people|[a-z]+\s+[a-z]+)\b)/i;
/** "must have been", "should have done": about the past, never a request. */
const PERFECT = /^(?:been|had|done|gone|made|seen|known|got|gotten|thought|felt|taken|given|[a-z]+ed)$/i;
/** Verbs after "you should" that are advice to a friend, not work for an assistant. */
const FRIENDLY_ADVICE = new Set([
  'try',
  'come',
  'go',
  'visit',
  'see',
  'watch',
  'get',
  'be',
  'have',
  'totally',
]);

/** The sentence cut into clauses (at commas, semicolons, colons and spaced dashes), each trimmed of lead-ins. */
function clausesOf(sentence: string): string[] {
  const out: string[] = [];
  for (const part of sentence.split(/[,;:]\s+|\s[—–-]\s/)) {
    const clause = part
      .replace(/^[\s*>#"'“”‘’(`-]+/, '')
      .replace(LEAD_IN, '')
      .trim();
    if (clause) out.push(clause);
  }
  return out;
}

/** True when `clause` opens with a bare action verb (optionally after an adverb in -ly or a negation). */
function opensImperative(clause: string): boolean {
  if (PHATIC_IMPERATIVE.test(clause)) return false;
  const words = clause.toLowerCase().match(/[a-z][a-z'’-]*/g) ?? [];
  let k = 0;
  if (words[k]?.endsWith('ly') && words[k] !== 'only' && ACTION_VERBS.has(words[k + 1] ?? '')) k++;
  const verb = words[k];
  if (!verb) return false;
  if (verb === 'do' || verb === "don't" || verb === 'dont' || verb === 'never' || verb === 'always') {
    const next = words[k + 1] ?? '';
    // "Do you ...?" asks; "Don't you think ...?" too.
    if (/^(?:you|they|we|i|he|she|it|that|this|your|my)$/.test(next)) return false;
    return verb !== 'do' || next === 'not' || ACTION_VERBS.has(next) || next === 'this' || next === 'it';
  }
  if (verb === 'come') return words[k + 1] === 'up';
  if (verb === 'see') return !/^(?:you|ya|what|how|why|if)$/.test(words[k + 1] ?? '');
  return ACTION_VERBS.has(verb);
}

/** True when `clause` puts an obligation on the work or the assistant (not on the speaker or others). */
function obliges(clause: string): boolean {
  if (SUBORDINATE.test(clause)) return false;
  const match = OBLIGATION.exec(clause);
  if (!match) return false;
  const before = clause.slice(0, match.index);
  if (/\bthat\s/i.test(before)) return false; // reported: "he thinks that Bambi should be ..."
  const subject = match[1] ?? '';
  const verb = (match[3] ?? '').toLowerCase();
  if (NARRATIVE_SUBJECT.test(subject)) return false;
  if (verb === 'have' && PERFECT.test((match[4] ?? '').trim())) return false;
  if (/^you\s+$/i.test(subject) || /^your\s+$/i.test(subject)) {
    const adverb = (match[2] ?? '').trim().toLowerCase();
    if (adverb === 'not' || adverb === 'never' || adverb === 'always' || adverb === 'only') return true;
    return ACTION_VERBS.has(verb) && !FRIENDLY_ADVICE.has(verb) && !FRIENDLY_ADVICE.has(adverb);
  }
  // "It must be so hard": the speaker guessing, not a requirement.
  if (
    /^(?:it|that|this|there)\s+$/i.test(subject) &&
    verb === 'be' &&
    /^\s+(?:so|such|nice|hard|fun|great|tough|amazing|awesome|exciting|scary|sad|lovely)\b/i.test(
      match[4] ?? '',
    )
  )
    return false;
  return true;
}

/** True when `sentence` asks, forbids, requires or prefers something of the assistant. */
export function isInstructionSentence(sentence: string): boolean {
  const text = sentence.length > MAX_CHARS ? sentence.slice(0, MAX_CHARS) : sentence;
  const words = text.trim().split(/\s+/);
  // A line of key material (a PEM body line, a pasted key) is data, not an instruction.
  if (words.length <= 2 && words.some(isKeyMaterial)) return false;
  const request = REQUEST.exec(text);
  if (request && (request[1] === undefined || ACTION_VERBS.has(request[1].toLowerCase()))) return true;
  if (CONSTRAINT.test(text)) return true;
  const clauses = clausesOf(text);
  if (clauses.some(opensImperative)) return true;
  const first = clauses[0] ?? '';
  // A question ("Do you ...?", "What did you ...?") asks for an answer now, not for something to keep.
  if (text.trimEnd().endsWith('?') || QUESTION_OPENER.test(first)) return false;
  return clauses.some(obliges);
}
