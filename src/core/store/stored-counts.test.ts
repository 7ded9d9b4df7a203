import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runSteps } from '../time-slice.js';
import { decodeStoredCounts } from './stored-counts.js';

/** The decoding before issue 47 point 2: both lists split at once, then read pair by pair. */
function splitDecode(hashes: string, tokens: string): Map<string, number> | undefined {
  const h = hashes.split(' ');
  const t = tokens.split(' ');
  if (h.length !== t.length) return undefined;
  const counts = new Map<string, number>();
  for (let i = 0; i < h.length; i++) {
    // Only a run of digits is a count (as written): not '', which Number reads as 0.
    const count = /^[0-9]+$/.test(t[i]!) ? Number(t[i]) : Number.NaN;
    if (Number.isSafeInteger(count)) counts.set(h[i]!, count);
  }
  return counts;
}

function decode(hashes: string, tokens: string, batch?: number): Map<string, number> | undefined {
  const counts = new Map<string, number>();
  return runSteps(decodeStoredCounts({ scope: 's', hashes, tokens }, counts, batch)) ? counts : undefined;
}

const hash = fc.stringMatching(/^[0-9a-z_:-]{0,14}$/);
const token = fc.oneof(
  fc.nat().map(String),
  fc.constantFrom('', '-1', '1.5', '1e3', 'x', '007', '9007199254740993', '12345678901234567890', '0x10'),
);

describe('decodeStoredCounts', () => {
  it('reads the same counts as splitting both lists at once, and refuses lists of different lengths', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(hash, token), { maxLength: 60 }),
        fc.integer({ min: -1, max: 1 }),
        (pairs, skew) => {
          const hashes = pairs.map(([h]) => h);
          const tokens = pairs.map(([, t]) => t);
          if (skew < 0) tokens.pop();
          if (skew > 0) tokens.push('3');
          const expected = splitDecode(hashes.join(' '), tokens.join(' '));
          const got = decode(hashes.join(' '), tokens.join(' '), 7);
          expect(got && [...got]).toEqual(expected && [...expected]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads no count from a blank entry (a forged or mangled record: a recount, not 0 tokens)', () => {
    expect(decode('h1 h2 h3', '5  7')).toEqual(
      new Map([
        ['h1', 5],
        ['h3', 7],
      ]),
    );
    expect(decode('h1', '')).toEqual(new Map());
    expect(decode('h1 h2 h3 h4', '1e3 0x10 -1 +4')).toEqual(new Map());
  });

  it('yields between batches instead of decoding a long record in one piece', () => {
    const hashes = Array.from({ length: 5_000 }, (_, i) => `h${i}`).join(' ');
    const tokens = Array.from({ length: 5_000 }, (_, i) => String(i)).join(' ');
    const steps = decodeStoredCounts({ scope: 's', hashes, tokens }, new Map(), 256);
    let yields = 0;
    while (!steps.next().done) yields++;
    expect(yields).toBe(Math.floor(4_999 / 256));
  });
});
