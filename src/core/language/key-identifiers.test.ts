import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findIdentifiers, IdentifierLedger, identifierKind, pickKeyIdentifiers } from './key-identifiers.js';

describe('key identifiers', () => {
  it('classifies ids, paths, tickets, URLs, file and error names; not words, dates, amounts or units', () => {
    const kinds = Object.fromEntries(
      [
        'ae03feac-5fd5-406c-88a1-a04687d421fc',
        'PAY-1234',
        'https://example.com/a?b=1',
        'src/core/app.ts',
        'fix/ledger-12',
        'setup.py',
        'AttributeError',
        'Dataset.pixel_array',
        'K7Q2ZP',
        '#W4829113',
        'credit_card_7719342',
        '6719934021',
      ].map((t) => [t, identifierKind(t)]),
    );
    expect(kinds).toEqual({
      'ae03feac-5fd5-406c-88a1-a04687d421fc': 'uuid',
      'PAY-1234': 'ticket',
      'https://example.com/a?b=1': 'url',
      'src/core/app.ts': 'path',
      'fix/ledger-12': 'path',
      'setup.py': 'file',
      AttributeError: 'name',
      'Dataset.pixel_array': 'name',
      K7Q2ZP: 'code',
      '#W4829113': 'code',
      credit_card_7719342: 'code',
      '6719934021': 'code',
    });
    for (const token of ['hello', 'p99', '2023-05-08', '112.50', '10ms', '4xx', 'CONSTANT_NAME', '12:30'])
      expect(identifierKind(token), token).toBeUndefined();
  });

  it('finds identifiers in prose, trailing punctuation stripped, backticked names included', () => {
    const found = findIdentifiers('Order #W4829113, item 6719934021. See src/app.ts: the `parse_config` fn.');
    expect(found.map((f) => f.text)).toEqual(['#W4829113', '6719934021', 'src/app.ts', 'parse_config']);
  });

  it('ranks ids passed to state-changing calls first, then user, then assistant; capped by budget', () => {
    const ledger = new IdentifierLedger();
    ledger.addText('I see order #W1111111 and #W3333333', 'assistant');
    ledger.addText('My order is #W2222222', 'user');
    ledger.add('#W3333333', 'action');
    expect(ledger.ranked()).toEqual(['#W3333333', '#W2222222', '#W1111111']);
    const count = (text: string) => Math.ceil(text.length / 4);
    expect(pickKeyIdentifiers(ledger.ranked(), 2 * (count('#W3333333') + 2), count)).toEqual([
      '#W3333333',
      '#W2222222',
    ]);
    expect(pickKeyIdentifiers(ledger.ranked(), 100, count, (id) => id === '#W2222222')).toEqual([
      '#W3333333',
      '#W1111111',
    ]);
  });

  it('ranks ids as a sort by rank, then latest first named (its linear steps)', () => {
    const origins = ['action', 'user', 'assistant', 'summary', 'result'] as const;
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 20_000 })),
            fc.constantFrom(...origins),
          ),
          { maxLength: 9000 },
        ),
        (adds) => {
          const ledger = new IdentifierLedger();
          const seen = new Map<string, { rank: number; order: number }>();
          for (const [n, origin] of adds) {
            const id = `ID-${n}`;
            ledger.add(id, origin);
            const rank = { action: 0, user: 1, summary: 2, assistant: 3, result: 4 }[origin];
            const known = seen.get(id);
            if (!known) seen.set(id, { rank, order: seen.size });
            else known.rank = Math.min(known.rank, rank);
          }
          const sorted = [...seen]
            .sort(([, a], [, b]) => a.rank - b.rank || b.order - a.order)
            .map(([id]) => id);
          expect(ledger.ranked()).toEqual(sorted);
        },
      ),
      { numRuns: 300 },
    );
  });
});
