import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyValueMatchAt } from '../../src/core/redaction/key-value-match.js';
import { DEFAULT_REDACTION_RULES } from '../../src/core/redaction/redaction-rules.js';

/**
 * Issue 44 point 5: the `key = value` rule reads its plainest shape by hand
 * (`password=b secret=c`); wherever it answers, it gives what the rule's regex gives.
 */

const rule = DEFAULT_REDACTION_RULES.find((each) => each.name === 'key-value')!;
const regex = new RegExp(rule.pattern.slice(4), 'iy');

const piece = fc.constantFrom(
  'password',
  'PASSWORD',
  'secret',
  'secret_key',
  'token',
  'api-key',
  'authorization',
  'pass',
  'passwordx',
  'auth',
  '=',
  ':',
  '==',
  '=>',
  ':=',
  ': ',
  ' ',
  '\t',
  '     ',
  ',',
  ';',
  '&',
  '.',
  '-',
  '_',
  'b',
  'a',
  'x9',
  'Bearer',
  'token',
  'digest',
  'A'.repeat(1030),
  'user.name',
  'n'.repeat(70),
  '"',
  "'",
  '\\',
  '\n',
  '\r',
  'é',
  '(',
);
const key = fc.constantFrom('password', 'Secret', 'token', 'apikey', 'jwt', 'credentials');
const assignment = fc
  .tuple(key, fc.constantFrom('=', ':'), fc.array(piece, { maxLength: 6 }))
  .map(([name, separator, rest]) => name + separator + rest.join(''));
const text = fc.array(fc.oneof(assignment, piece), { maxLength: 10 }).map((pieces) => pieces.join(''));

describe('the key = value rule read by hand', () => {
  it('the rule uses it', () => {
    expect(rule.quickMatch).toBe(keyValueMatchAt);
  });

  it('answers for the hostile shape', () => {
    const input = 'token=a password=b secret=c token=a';
    expect(keyValueMatchAt(input, 8)).toEqual(['password=b', 'password', '=']);
    expect(keyValueMatchAt(input, 19)).toEqual(['secret=c', 'secret', '=']);
    // A scheme word followed by a blank, a key the alternation reads with a lookbehind: the regex.
    expect(keyValueMatchAt('token=bearer x=1', 0)).toBeUndefined();
    expect(keyValueMatchAt('pass=b c=1', 0)).toBeUndefined();
  });

  it('wherever it answers, the regex gives the same match and groups', () => {
    let answered = 0;
    fc.assert(
      fc.property(text, (input) => {
        for (let at = 0; at < input.length; at++) {
          const quick = keyValueMatchAt(input, at);
          if (quick === undefined) continue;
          answered++;
          regex.lastIndex = at;
          const match = regex.exec(input);
          expect(match === null ? null : [...match], `${JSON.stringify(input)} at ${at}`).toEqual(quick);
        }
      }),
      { numRuns: 1500 },
    );
    expect(answered).toBeGreaterThan(100);
  });
});
