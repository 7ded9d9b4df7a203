import { describe, expect, it } from 'vitest';
import { instructionScore } from './instruction-model.js';
import { laterCuesOf, sentenceAsks } from './later-cue.js';

describe('what the rest of a message asks', () => {
  it('reads each sentence as a question, an order or a want, or neither', () => {
    expect(sentenceAsks('How should I price my bread?')).toBe(1);
    expect(sentenceAsks('Could you check the logs')).toBe(1);
    expect(sentenceAsks('Write a short poem about rain.')).toBe(2);
    expect(sentenceAsks("Please don't touch the schema.")).toBe(2);
    expect(sentenceAsks("I'd like two flat whites.")).toBe(2);
    expect(sentenceAsks('I run a small bakery in Leeds.')).toBe(0);
    expect(sentenceAsks('The secretary drives a yellow car.')).toBe(0);
  });

  it('gives each sentence what the sentences after it ask, the last none', () => {
    expect(laterCuesOf(['I run a small bakery.', 'How should I price my bread?'])).toEqual(['q', 'none']);
    expect(laterCuesOf(['Oranges cost more than apples.', 'Write it as a table.', 'Why?'])).toEqual([
      'q+imp',
      'q',
      'none',
    ]);
    expect(laterCuesOf(['Book the earliest train.'])).toEqual(['none']);
    expect(laterCuesOf([])).toEqual([]);
  });

  it("reads the user's situation before a question lower than the same words without it", () => {
    const situation = 'I run a small bakery in Leeds.';
    const [cue] = laterCuesOf([situation, 'How should I price my bread?']);
    const before = instructionScore(situation, 'assistant', undefined, 'first', cue);
    expect(before).toBeLessThan(instructionScore(situation, 'assistant', undefined, 'first', 'none'));
    expect(before).toBeLessThan(0);
  });
});
