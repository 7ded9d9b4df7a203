/**
 * Issue 47 point 2: findIdentifiers scans char codes instead of `matchAll` (a match array and a
 * string per word of every cleared tool output). It must find what the regex version found,
 * kept here as the reference, on any text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scaled } from '../../../test/support/test-scale.js';
import { type FoundIdentifier, findIdentifiers, identifierKind } from './key-identifiers.js';

const MAX_URL_CHARS = 300;
const TOKEN = /[\w#@./:~+%?=&-]+/g;
const BACKTICKED = /`([A-Za-z_][\w.]{2,60})`/g;

function trimPunctuation(token: string): string {
  let end = token.length;
  while (end > 0 && '.:,;-+~'.includes(token[end - 1]!)) end--;
  let start = 0;
  while (
    start < end &&
    '.:-+~'.includes(token[start]!) &&
    !token.startsWith('../embedded-summarizer') &&
    !token.startsWith('../')
  )
    start++;
  return token.slice(start, end);
}

/** The former findIdentifiers (matchAll over every token). */
function reference(text: string, limit = Number.POSITIVE_INFINITY): FoundIdentifier[] {
  const seen = new Set<string>();
  const out: FoundIdentifier[] = [];
  for (const match of text.matchAll(TOKEN)) {
    let token = match[0];
    if (token.length > MAX_URL_CHARS + 4) continue;
    token = trimPunctuation(token);
    const kind = identifierKind(token);
    if (!kind || seen.has(token)) continue;
    seen.add(token);
    out.push({ text: token, kind });
    if (out.length >= limit) return out;
  }
  for (const match of text.matchAll(BACKTICKED)) {
    const token = match[1]!;
    if (seen.has(token) || !/[._]|[a-z][A-Z]/.test(token)) continue;
    seen.add(token);
    out.push({ text: token, kind: 'name' });
    if (out.length >= limit) break;
  }
  return out;
}

const pieces = [
  'the',
  'build',
  'Error',
  'TypeError',
  'Dataset.pixel_array',
  'PAY-1234',
  'src/core/app.ts',
  '../x/y.ts',
  '../embedded-summarizer/a.ts',
  'https://example.com/a?b=1',
  'http://x',
  'ae03feac-5fd5-406c-88a1-a04687d421fc',
  'setup.py',
  '#W4829113',
  '6719934021',
  '10ms',
  'p99',
  'fix/ledger-12',
  '/title',
  '.env',
  '--mode=3',
  'a:b',
  'K7Q2ZP',
  'AbCdEfGhIjKlMnOp1234',
  'é',
  'ß',
  '日本',
  '`pkg.name`',
  '`fooBar`',
  '~/.bashrc',
  '+1',
  'x'.repeat(310),
  `https://e.com/${'a'.repeat(300)}`,
  'a/b/c',
  'CONSTANT_NAME',
  'v2',
  'order_12345',
  '...',
  ':::',
  '-x-',
];
const separators = [' ', '\n', ', ', '; ', '(', ')', '"', "'", '\t', '', '.', ':', '-', '`', '<', '>', '|'];
const text = fc
  .array(fc.tuple(fc.constantFrom(...pieces), fc.constantFrom(...separators)), { maxLength: 60 })
  .map((parts) => parts.map(([piece, sep]) => piece + sep).join(''));
const anyText = fc.oneof(text, fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }));

describe('findIdentifiers', () => {
  it('finds what the matchAll scan found, with any limit', () => {
    fc.assert(
      fc.property(anyText, fc.integer({ min: 1, max: 30 }), (input, limit) => {
        expect(findIdentifiers(input)).toEqual(reference(input));
        expect(findIdentifiers(input, limit)).toEqual(reference(input, limit));
      }),
      { numRuns: scaled(2_000, 300), seed: 4_702 },
    );
  });
});
