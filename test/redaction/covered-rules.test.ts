import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyValueMayHold } from '../../src/core/redaction/key-value-may-hold.js';
import { DEFAULT_REDACTION_RULES, type RedactionRule } from '../../src/core/redaction/redaction-rules.js';
import { createRuleMatcher } from '../../src/core/redaction/redaction-scanner.js';

/**
 * Issue 44 point 5: the secret-named-key rule is not tried where the `key = value` rule was
 * kept at the same position (`coveredBy`), so `password=b secret=c` dense in hostile text
 * skips its gate. The claim: there, its match would end no further, so it could never win.
 * Nor is it tried where the `key = value` gate refused (`refusedWith`): no match starts there.
 */

const rule = (name: string) => DEFAULT_REDACTION_RULES.find((each) => each.name === name)!;
const keyValue = rule('key-value');
const namedKey = rule('secret-named-key');

/** Each match as `start-end`, and each as a map from start to end. */
function matches(rules: readonly RedactionRule[], text: string): string[] {
  const found: string[] = [];
  createRuleMatcher(rules, () => 'X')(text, (start, end) => void found.push(`${start}-${end}`));
  return found;
}
function endsByStart(rules: readonly RedactionRule[], text: string): Map<number, number> {
  const ends = new Map<number, number>();
  createRuleMatcher(rules, () => 'X')(text, (start, end) => void ends.set(start, end));
  return ends;
}

function uncovered(each: RedactionRule): RedactionRule {
  const { coveredBy: _coveredBy, refusedWith: _refusedWith, ...rest } = each;
  return rest;
}

/** Keys, separators, values of either rule's shape, and what ends or caps a value. */
const piece = fc.constantFrom(
  'password',
  'secret',
  'token',
  'SECRET_KEY_BASE',
  'api_key',
  'apiKey',
  'db_password_v2',
  'auth',
  'pass',
  '=',
  ':',
  ':=',
  '=>',
  '==',
  ' ',
  '\t',
  ' '.repeat(17),
  '"',
  "'",
  '`',
  '\\',
  '\\"',
  '\\\\"',
  'b',
  'a',
  'null',
  'the',
  'Bearer ',
  'token ',
  'AbCdEf012345+/=~',
  'x9Qz.Yw-Vu_Ts',
  'A'.repeat(4100),
  ',',
  ';',
  '&',
  ')',
  '.',
  '(',
  '<',
  '|',
  '\n',
  '\\n',
  'é',
);

const key = fc.constantFrom('password', 'secret', 'token', 'SECRET_KEY_BASE', 'api_key', 'apiKey', 'Secret');
const separator = fc.constantFrom('=', ':', ': ', ' = ', '"=', '\\":', ':=', '=>');
/** Mostly assignments (a key, a separator, then anything), so both rules often match at one key. */
const assignment = fc
  .tuple(key, separator, fc.array(piece, { maxLength: 6 }))
  .map(([name, between, value]) => name + between + value.join(''));
const text = fc.array(fc.oneof(assignment, piece), { maxLength: 12 }).map((pieces) => pieces.join(''));

describe('a rule covered by another', () => {
  it('the secret-named key is covered by the key = value rule', () => {
    expect(namedKey.coveredBy).toBe(keyValue.name);
    expect(namedKey.refusedWith).toBe(keyValue.name);
    expect(DEFAULT_REDACTION_RULES.indexOf(keyValue)).toBeLessThan(DEFAULT_REDACTION_RULES.indexOf(namedKey));
  });

  it('where both rules match at one position, the named key ends no further', () => {
    fc.assert(
      fc.property(text, (input) => {
        const kept = endsByStart([keyValue], input);
        for (const [start, end] of endsByStart([uncovered(namedKey)], input)) {
          const covering = kept.get(start);
          if (covering !== undefined) expect(end, JSON.stringify(input)).toBeLessThanOrEqual(covering);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('where the key = value gate refuses, no named key starts', () => {
    fc.assert(
      fc.property(text, (input) => {
        const { gate: _gate, ...ungated } = uncovered(namedKey);
        for (const start of endsByStart([ungated], input).keys())
          expect(keyValueMayHold(input, start), JSON.stringify(input)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('the default rules find the same matches with or without the cover', () => {
    const without = DEFAULT_REDACTION_RULES.map(uncovered);
    fc.assert(
      fc.property(text, (input) => {
        expect(matches(DEFAULT_REDACTION_RULES, input), JSON.stringify(input)).toEqual(
          matches(without, input),
        );
      }),
      { numRuns: 300 },
    );
  });
});
