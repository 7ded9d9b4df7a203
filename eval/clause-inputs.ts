/**
 * What the built-in summarizer's scoring knows about each clause of a chat between people, as
 * the learned clause model's input (eval/clause-features.ts, issue 45 point 3): the
 * rarity, the signal and the "no information" mark as `scoreUnitSteps` computes them
 * (src/core/summary/embedded/score-units.ts, recomputed here from its exported parts: the
 * model is not in src), and the turn around the clause. On branch issue-45ah's commit
 * 0d582e9 the same inputs came from a hook in scoreUnitSteps; the features are the same.
 */
import { type FoundIdentifier, findIdentifiers } from '../src/core/language/key-identifiers.js';
import { generalRarity } from '../src/core/language/word-rarity.js';
import {
  carriesInformation,
  inverseDocumentFrequency,
  peopleSignal,
  type SpeakerName,
  speakerNames,
  wordWeight,
} from '../src/core/summary/embedded/score-units.js';
import type { Unit } from '../src/core/summary/embedded/types.js';
import { type ClauseInput, isQuestion } from './clause-features.js';

/** A word of a unit that is a speaker's name (in full, or capitalized in the text). */
function spokenName(word: string, text: string, speaker: SpeakerName): boolean {
  if (speaker(word)) return true;
  return (
    speaker(word.charAt(0).toUpperCase() + word.slice(1)) &&
    text.includes(word.charAt(0).toUpperCase() + word.slice(1))
  );
}

/** Capitalized words past the first that are not `I` nor a speaker's name (at most 8). */
function properNouns(text: string, speaker: SpeakerName): number {
  let first = true;
  let n = 0;
  for (const match of text.matchAll(/[\p{L}][\p{L}'’-]*/gu)) {
    const word = match[0];
    if (!first && word !== 'I' && !word.startsWith("I'") && !word.startsWith('I’') && !speaker(word)) {
      const c = word.charCodeAt(0);
      if (c >= 65 && c <= 90 && word.length > 1 && ++n >= 8) return n;
    }
    first = false;
  }
  return n;
}

/** True when the nearest clause of another speaker before (`step` -1) or after (1) `index` is a question. */
function askedBy(units: readonly Unit[], index: number, step: 1 | -1): boolean {
  const speaker = units[index]!.speaker;
  for (let i = index + step, n = 0; i >= 0 && i < units.length && n < 8; i += step, n++) {
    const other = units[i]!;
    if (other.speaker !== speaker) return isQuestion(other.text);
  }
  return false;
}

/** The model's input for each clause of `units` (a chat between people, in order). */
export function clauseInputs(units: readonly Unit[]): ClauseInput[] {
  const idf = inverseDocumentFrequency(units);
  const df = new Map<string, number>();
  for (const unit of units) for (const word of unit.words) df.set(word, (df.get(word) ?? 0) + 1);
  const ids: FoundIdentifier[][] = units.map((unit) => findIdentifiers(unit.text, 16));
  const idUnits = new Map<string, number>();
  for (const found of ids) for (const f of found) idUnits.set(f.text, (idUnits.get(f.text) ?? 0) + 1);
  const rare = (id: string) => (idUnits.get(id) ?? 0) <= 3;
  const speaker = speakerNames(units.map((u) => u.speaker));
  const maxOrder = Math.max(1, ...units.map((u) => u.order));
  return units.map((unit, index) => {
    let rarity = 0;
    for (const word of unit.words)
      if (!spokenName(word, unit.text, speaker))
        rarity += (idf.get(word) ?? 0) * wordWeight(word) * (1 + generalRarity(word));
    const theme = unit.words.length > 0 && unit.words.every((w) => (df.get(w) ?? 0) >= 3);
    if (theme) rarity *= 0.5;
    return {
      text: unit.text,
      words: unit.words,
      rarity,
      signal: peopleSignal(unit.text, rare, ids[index], speaker),
      empty: !carriesInformation(unit.text, unit.words, speaker),
      names: properNouns(unit.text, speaker),
      askedBefore: askedBy(units, index, -1),
      askedAfter: askedBy(units, index, 1),
      recency: Math.max(0, unit.order / maxOrder),
      theme,
    };
  });
}
