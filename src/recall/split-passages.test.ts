import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeCut, splitPassages } from './split-passages.js';

describe('splitPassages', () => {
  it('covers the text contiguously with passages of at most `size`, never inside a surrogate pair', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', ' ', '\n', '😀', 'é', 'x'), maxLength: 3000 }),
        fc.integer({ min: 100, max: 900 }),
        (text, size) => {
          const passages = splitPassages(text, size);
          let at = 0;
          for (const passage of passages) {
            expect(passage.start).toBe(at);
            expect(passage.end).toBeGreaterThan(passage.start);
            expect(passage.end - passage.start).toBeLessThanOrEqual(size);
            expect(safeCut(text, passage.end)).toBe(passage.end);
            at = passage.end;
          }
          expect(at).toBe(text.length);
        },
      ),
    );
  });

  it('prefers a line break, then a space, in the last quarter of a window', () => {
    const text = `${'a'.repeat(80)}\n${'b'.repeat(10)} ${'c'.repeat(200)}`;
    expect(splitPassages(text, 100)[0]).toEqual({ n: 0, start: 0, end: 81 });
    expect(splitPassages(`${'a'.repeat(90)} ${'c'.repeat(50)}`, 100)[0]?.end).toBe(91);
    expect(splitPassages('z'.repeat(250), 100).map((p) => p.end)).toEqual([100, 200, 250]);
  });
});
