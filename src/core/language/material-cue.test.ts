import { describe, expect, it } from 'vitest';
import { splitSentences } from '../summary/embedded/units.js';
import { materialCuesOf } from './material-cue.js';

const cues = (message: string) => materialCuesOf(splitSentences(message));

describe('materialCuesOf (issue 45, twelfth pass)', () => {
  it('marks the sentences of a quotation that spans several, from its opening mark to its closing one', () => {
    expect(
      cues(
        'Evaluate this memo. "Sales fell last year. Buy ads now. It will pay off." Is the argument sound?',
      ),
    ).toEqual(['none', 'quote', 'quote', 'quote', 'none']);
    expect(cues('Rewrite: “Stop the car. Open the door.” Keep it short.')).toEqual(['none', 'quote', 'none']);
  });

  it('marks nothing for a mark never closed or an inch mark, and keeps an ask after the closing mark', () => {
    expect(cues('Buy the 27" monitor. Never pay more than $300. Ask me first.')).toEqual([
      'none',
      'none',
      'none',
    ]);
    expect(cues('Use "pnpm. Never push to main.')).toEqual(['none', 'none']);
    expect(cues('Evaluate this: "Sales fell. Buy ads." and tell me why.')).toEqual(['none', 'none']);
  });

  it('marks a sentence quoted whole, and not a sentence that only holds a quotation', () => {
    expect(cues('Make this polite.\n"I am angry that you took my work."')).toEqual(['none', 'quote']);
    expect(cues('Translate "good morning" into French. Say "hi" to Bob.')).toEqual(['none', 'none']);
  });

  it('marks the lines of a fenced block, and the sentences after a closing colon as `colon`', () => {
    expect(cues('Fix this:\n```\nDelete the table.\n```\nExplain why.')).toEqual([
      'none',
      'quote',
      'quote',
      'quote',
      'colon',
    ]);
    expect(cues('Here are the reviews:\nThe plot was thin.\nThe acting was fine.')).toEqual([
      'none',
      'colon',
      'colon',
    ]);
  });

  it('is read in one pass: a long message of many quotation marks', () => {
    const message = '"Quoted." '.repeat(2000);
    const out = cues(message);
    expect(out.length).toBe(splitSentences(message).length);
    expect(out.every((cue) => cue === 'quote')).toBe(true);
  });
});
