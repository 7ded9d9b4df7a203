import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clearedPlaceholder,
  forgetReadIds,
  readPlaceholderIdsSteps,
} from '../preflight/view/realize-rewrite.js';
import { runSteps } from '../time-slice.js';
import { findIdentifiers, findIdentifiersSteps } from './key-identifiers.js';

/** Words that are identifiers of every kind, plain words, punctuation and backticked names. */
const piece = fc.constantFrom(
  'PROJ-123',
  'src/core/a.ts',
  '../up/b.js',
  'notes.md',
  'https://example.com/x?id=4',
  '123e4567-e89b-12d3-a456-426614174000',
  'user_id',
  '`fooBar.baz`',
  '`plain`',
  'hello',
  'World',
  ' ',
  '\n',
  '.:-+~',
  'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  'ORD-',
  '9',
);

describe('findIdentifiersSteps', () => {
  it('finds what findIdentifiers finds, whatever the length, the limit and where the steps fall', () => {
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 400 }),
        fc.integer({ min: 0, max: 30_000 }),
        fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
        (pieces, pad, limit) => {
          // Padding moves the tokens across the 16k-character step bounds.
          const text = `${'x'.repeat(pad)} ${pieces.join('')} ${pieces.join(' ')}`;
          expect(runSteps(findIdentifiersSteps(text, limit))).toEqual(findIdentifiers(text, limit));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('yields over a long text (issue 47: 200k characters scanned at once held the loop ~18 ms)', () => {
    const text = 'GET /api/v1/users?id=42 200 took 12ms PROJ-7\n'.repeat(5_000);
    const steps = findIdentifiersSteps(text, 24);
    let yields = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) yields++;
    expect(step.value).toEqual(findIdentifiers(text, 24));
    expect(yields).toBeGreaterThanOrEqual(10);
  });

  it("gives a cleared output's placeholder the ids it would find itself", () => {
    const output = `${'line of output src/a.ts PROJ-9 more\n'.repeat(8_000)}tail 123e4567-e89b-12d3-a456-426614174000`;
    const direct = clearedPlaceholder('read_file', output.length, 'ref-1', output);
    runSteps(readPlaceholderIdsSteps(output));
    expect(clearedPlaceholder('read_file', output.length, 'ref-1', output)).toBe(direct);
    forgetReadIds();
    expect(clearedPlaceholder('read_file', output.length, 'ref-1', output)).toBe(direct);
  });
});
