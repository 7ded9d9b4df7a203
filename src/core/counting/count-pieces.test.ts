/**
 * Issue 47 point 2: the counter splits text with a sticky test instead of `matchAll`; every
 * count must equal gpt-tokenizer's own `countTokens` (and `encode().length`), for both
 * encodings, whether the encoding was built in slices or loaded at once.
 */

import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scaled } from '../../../test/support/test-scale.js';
import { piecesCounterOf, piecesSliced } from './count-pieces.js';
import { type BpeEncoding, loadEncodingInSlices } from './load-encoding.js';

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };

const samples = [
  '',
  ' ',
  'hello world',
  "I'm sure they'll say it's THEIR call, we'd've",
  'const x = await fetch(`https://example.com/api?q=1&r=2`);\n\n\t  return x;  \r\n',
  '<|endoftext|> and <|im_start|>system',
  '日本語のテキスト、絵文字 😀👍🏽 and Ünïcödé',
  '   \n\n\n   trailing spaces   ',
  '12345678901234567890 3.14159 1,000,000',
  'a'.repeat(5_000),
  '\u{10FFFF}\uD800 lone surrogate \uDFFF',
  'ae03feac-5fd5-406c-88a1-a04687d421fc PAY-1234 src/core/app.ts:42',
];

describe('piecesCounterOf', () => {
  for (const name of ['o200k_base', 'cl100k_base'] as const) {
    it(`counts as countTokens and encode (${name})`, async () => {
      // The encoding built in slices (what a manager uses) is counted piece by piece; the one
      // \`require\` loads hides its core and is counted by countTokens.
      const sliced = await loadEncodingInSlices(name);
      const core = (sliced as { bytePairEncodingCoreProcessor?: { tokenSplitRegex?: RegExp } })
        .bytePairEncodingCoreProcessor;
      expect(core?.tokenSplitRegex?.global).toBe(true);
      const required = createRequire(import.meta.url)(`gpt-tokenizer/encoding/${name}`) as BpeEncoding;
      for (const encoding of [sliced, required]) {
        const count = piecesCounterOf(encoding);
        for (const text of samples) {
          expect(count(text)).toBe(encoding.countTokens(text, NO_SPECIAL));
          expect(count(text)).toBe(encoding.encode(text, NO_SPECIAL).length);
        }
        fc.assert(
          fc.property(
            fc.oneof(
              fc.string({ maxLength: 300 }),
              fc.string({ unit: 'grapheme', maxLength: 200 }),
              fc.string({ unit: 'binary', maxLength: 200 }),
              fc
                .array(
                  fc.constantFrom(
                    ' ',
                    '\n',
                    '\r\n',
                    '\t',
                    "'s",
                    "'LL",
                    'ab',
                    'Zz',
                    '12',
                    '3456',
                    '!?',
                    '—',
                    '😀',
                    'é',
                    '日',
                  ),
                  { maxLength: 80 },
                )
                .map((parts) => parts.join('')),
            ),
            (text) => count(text) === encoding.countTokens(text, NO_SPECIAL),
          ),
          { numRuns: scaled(3_000, 500), seed: 4_705 },
        );
      }
    });
  }

  it('looks the pieces of a text up in the rank table without slicing them out (o200k_base)', async () => {
    // Issue 47 point 2: a string per piece was most of a cold count's allocation. Every piece
    // of this text is a token of the table, so none is made a string; a piece that is not
    // (a rare word split by byte pairs) still is, and counts the same.
    const encoding = await loadEncodingInSlices('o200k_base');
    const count = piecesCounterOf(encoding);
    const text = 'The tests passed again, so we ship it today.\n\nRun them once more tomorrow morning.';
    const before = piecesSliced();
    expect(count(text)).toBe(encoding.countTokens(text, NO_SPECIAL));
    expect(piecesSliced()).toBe(before);
    const rare = 'zxqvbnmwq';
    expect(count(rare)).toBe(encoding.countTokens(rare, NO_SPECIAL));
    expect(piecesSliced()).toBe(before + 1);
  });
});
