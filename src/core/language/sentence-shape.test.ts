import { describe, expect, it } from 'vitest';
import { PLAIN_VIEW, sinks, startSentence } from './feature-sink.js';
import { wordsOf } from './instruction-features.js';
import { isImperativeDo, openingShape, saysPast } from './sentence-shape.js';

/** The opening shape the plain view reads for `sentence`'s first two words. */
function shapeOf(sentence: string): string {
  const [word = '', next = '</s>'] = wordsOf(sentence);
  startSentence(false, PLAIN_VIEW);
  return openingShape(sinks.plain, word, next, false);
}

describe('sentence shapes the instruction model reads (issue 45, fifteenth pass)', () => {
  it('"do" before its object is the imperative verb; before a subject it asks', () => {
    expect(isImperativeDo('do', 'this')).toBe(true);
    expect(isImperativeDo('do', 'it')).toBe(true);
    expect(isImperativeDo('do', 'you')).toBe(false);
    expect(isImperativeDo('do', 'i')).toBe(false);
    expect(isImperativeDo('does', 'this')).toBe(false);
    expect(shapeOf('Do this step by step.')).toBe('bare');
    expect(shapeOf('Do the same for the second list.')).toBe('bare');
    expect(shapeOf('Do you know a good hotel?')).toBe('aux-you');
    expect(shapeOf('Do I need to sign in?')).toBe('aux');
  });

  it('the assistant named in the third person is the addressee, like "you"', () => {
    expect(shapeOf('The assistant must not push to GitHub.')).toBe('you');
    expect(shapeOf('The agent is not allowed to run interactive commands.')).toBe('you');
    expect(shapeOf('You must not push to GitHub.')).toBe('you');
    expect(shapeOf('The weather is nice today.')).toBe('subject');
  });

  it('a bare opening in the third person describes; the base form orders', () => {
    expect(shapeOf('Finds all files with the given name.')).toBe('bare-s');
    expect(shapeOf('Looks like a rounding issue here.')).toBe('bare-s');
    expect(shapeOf('Find all files with the given name.')).toBe('bare');
    expect(shapeOf('Discuss the results.')).toBe('bare');
    expect(shapeOf('Focus on the second list.')).toBe('bare');
  });

  it('a past or perfect verb reports what happened', () => {
    expect(saysPast(wordsOf('Your command ran successfully and did not produce any output.'))).toBe(true);
    expect(saysPast(wordsOf("Your terminal session has started and you're in the root directory."))).toBe(
      true,
    );
    expect(saysPast(wordsOf('The file has not been changed.'))).toBe(true);
    expect(saysPast(wordsOf('Run the command and check its output.'))).toBe(false);
    expect(saysPast(wordsOf('Make sure the tests have passed before you push.'))).toBe(true);
    expect(saysPast(wordsOf('I have a bakery.'))).toBe(false);
  });
});
