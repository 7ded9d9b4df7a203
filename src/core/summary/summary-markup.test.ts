/**
 * Issue 47 point 1: a text whose characters that are not ASCII each map to one unit is read
 * by built-ins (`mappedInPlace`), not by the loop over every character. Property: the same
 * skeleton as the loop, offsets included (none: the text's own), for any text over ASCII and
 * look-alikes, marks, capitals whose lower case changes length or depends on context, and
 * surrogate pairs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findLibraryTags, loopSkeletonOf, type Skeleton, skeletonOf } from './summary-markup.js';

const PIECES = [
  'a',
  'Z',
  ' ',
  '\t',
  '\n',
  '<',
  '/',
  '-',
  '&lt;',
  'compact-summary',
  'HISTORY',
  'Conversation',
  '\u2192', // arrow
  '\u2014', // em dash
  '\u2013',
  '\u2026', // ellipsis: NFKC '...'
  '\u201c',
  '\u2019',
  '\u2022',
  '\uff1c', // fullwidth <
  '\u2039', // look-alike <
  '\u0421', // Cyrillic capital ES
  '\u1d04', // small capital c
  '\u200b', // zero width space (dropped)
  '\u0301', // combining mark (dropped)
  '\u03a3', // capital sigma: lower case by context
  '\u0130', // capital I with dot: lower case of two units
  '\u00c9',
  '\ufb00', // ff ligature: two units
  '\u00a0', // no-break space
  '\ud83c\udf89', // a surrogate pair
  '\ud800', // a lone surrogate
];

/** Each skeleton character's offset in the original, the text's own where none are given. */
const offsetsOf = (skeleton: Skeleton) =>
  skeleton.offsets ? [...skeleton.offsets] : Array.from(skeleton.text, (_, i) => i);

describe('skeletonOf', () => {
  it('reads a text as the loop over its characters reads it', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }), (pieces) => {
        const text = pieces.join('');
        const skeleton = skeletonOf(text);
        const loop = loopSkeletonOf(text);
        expect(skeleton.text).toBe(loop.text);
        expect(offsetsOf(skeleton)).toEqual(offsetsOf(loop));
      }),
      { numRuns: 2_000 },
    );
  });

  it('finds a tag after an arrow in a summary at its place', () => {
    const text = `Fixed auth \u2192 tests pass. </COMPACT-SUMMARY> and \uff1chistory`;
    expect(skeletonOf(text).offsets).toBeUndefined();
    expect(findLibraryTags(text).map((tag) => [tag.start, tag.closing, tag.name])).toEqual([
      [text.indexOf('</'), true, 'compact-summary'],
      [text.indexOf('\uff1c'), false, 'history'],
    ]);
  });
});
