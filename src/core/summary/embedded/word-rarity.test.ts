import { describe, expect, it } from 'vitest';
import { generalRarity, UNLISTED_RANK, wordRank } from '../../language/word-rarity.js';
import { carriesInformation } from './score-units.js';
import { contentWords } from './units.js';

describe('general rarity', () => {
  it('ranks words of spoken English, plurals as their singular, and rates rare words higher', () => {
    expect(wordRank('the')).toBeLessThan(10);
    expect(wordRank('guitars')).toBe(wordRank('guitar'));
    expect(wordRank('zxqvw')).toBe(UNLISTED_RANK);
    expect(generalRarity('great')).toBe(0);
    expect(generalRarity('guitar')).toBeGreaterThan(generalRarity('time'));
    expect(generalRarity('pottery')).toBe(1);
    expect(generalRarity('a1b2')).toBe(1);
  });

  it('tells a line that carries a fact from small talk', () => {
    const info = (text: string) => carriesInformation(text, contentWords(text));
    expect(info('That must have been so much fun!')).toBe(false);
    expect(info('Keep it up, you are doing great!')).toBe(false);
    expect(info('I signed up for a pottery class.')).toBe(true);
    expect(info('We moved here from Sweden.')).toBe(true);
    expect(info('I have 3 kids.')).toBe(true);
  });
});
