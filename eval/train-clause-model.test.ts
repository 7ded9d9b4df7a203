import { describe, expect, it } from 'vitest';
import { scoreUnits } from '../src/core/summary/embedded/score-units.js';
import type { Unit } from '../src/core/summary/embedded/types.js';
import { contentWords } from '../src/core/summary/embedded/units.js';
import { CLAUSE_FEATURE_NAMES, clauseFeatures, clauseProbability } from './clause-features.js';
import { clauseInputs } from './clause-inputs.js';
import { type ClauseSet, topShare, trainClauseModel } from './train-clause-model.js';

const unit = (speaker: string, text: string, order: number): Unit => ({
  text,
  speaker,
  source: 'user',
  segment: 0,
  order,
  words: contentWords(text),
  value: 0,
});

describe('clause model tooling (issue 45, point 3)', () => {
  const units = [
    unit('Caroline', 'What did you do last weekend?', 1),
    unit('Melanie', 'I went camping at Yosemite with my kids', 2),
    unit('Caroline', 'That sounds so fun!', 3),
  ];
  const features = clauseInputs(units).map(clauseFeatures);

  it('reads the features scoring knows: a named first-person event after a question, small talk without information', () => {
    const at = (name: (typeof CLAUSE_FEATURE_NAMES)[number]) => CLAUSE_FEATURE_NAMES.indexOf(name);
    expect(features.every((f) => f.length === CLAUSE_FEATURE_NAMES.length)).toBe(true);
    expect(features[1]![at('named')]).toBe(1);
    expect(features[1]![at('asked before')]).toBe(1);
    expect(features[1]![at('family')]).toBe(1);
    expect(features[2]![at('no information')]).toBe(1);
    expect(features[2]![at('asked before')]).toBe(0);
    // The hand value's parts are those scoreUnits multiplies.
    scoreUnits(units, { agentic: false, people: true });
    expect(units[1]!.value).toBeGreaterThan(units[2]!.value);
  });

  it('trains deterministically and ranks the positive clauses first', () => {
    const set: ClauseSet = {
      id: 'toy',
      units: units as ClauseSet['units'],
      features,
      labels: [0, 1, 0],
      hand: units.map(() => 1),
      room: 60,
    };
    const w = trainClauseModel([set, set], 0.01, 25);
    expect(trainClauseModel([set, set], 0.01, 25)).toEqual(w);
    const p = features.map((f) => clauseProbability(f, w));
    expect(p[1]).toBeGreaterThan(Math.max(p[0]!, p[2]!));
    expect(topShare(set, p)).toEqual({ top: 1, answers: 1 });
  });
});
