import { describe, expect, it } from 'vitest';
import { PLAIN_VIEW, sinks, startSentence } from './feature-sink.js';
import { wordsOf } from './instruction-features.js';
import { isImperativeDo, openingShape, opensReport, saysPast } from './sentence-shape.js';

/** The opening shape the plain view reads for `sentence`'s first two words. */
function shapeOf(sentence: string): string {
  const words = wordsOf(sentence);
  const [word = '', next = '</s>'] = words;
  startSentence(false, PLAIN_VIEW);
  return openingShape(sinks.plain, word, next, false, words, 0);
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

  it('the addressee as the subject of a past or perfect verb reports, as a statement does; asked, it stays "you"', () => {
    expect(shapeOf('Your command ran successfully and did not produce any output.')).toBe('subject');
    expect(shapeOf('Your changes have NOT been applied.')).toBe('subject');
    expect(shapeOf('Your proposed edit has introduced new syntax error(s).')).toBe('subject');
    expect(shapeOf("You've made a mistake in the second step.")).toBe('subject');
    expect(shapeOf('You asked for three options.')).toBe('subject');
    expect(shapeOf('You should always wait for feedback after every command.')).toBe('you');
    expect(shapeOf('Your task is to write a poem.')).toBe('you');
    expect(shapeOf('You have to run the tests first.')).toBe('you');
    expect(shapeOf('You need to write a job description.')).toBe('you');
    expect(shapeOf('You are given a list of numbers.')).toBe('you');
  });

  it('an -ing word as the subject of a finite verb states; a lead clause or a verbless request does not', () => {
    expect(shapeOf('Running it again will lead to the same error.')).toBe('subject');
    expect(shapeOf('Pushing is not the end of the task.')).toBe('subject');
    expect(shapeOf('Using a table, compare the two players.')).toBe('bare');
    expect(shapeOf('Looking for a restaurant in the east.')).toBe('bare');
    expect(shapeOf('Looking for a restaurant that is cheap.')).toBe('bare');
    expect(shapeOf('Bring me what you can.')).toBe('bare');
    expect(opensReport(wordsOf('Anything in the area would be fine.'), 0)).toBe(false);
  });
});
