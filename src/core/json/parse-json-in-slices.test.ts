/**
 * Parsing in slices gives exactly `JSON.parse`'s value (any batch size and any size from which
 * a container is read element by element), fails where `JSON.parse` fails, and gives the event
 * loop turns while it parses (issue 47 point 2: no block over 20 ms on a 20 MB body).
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countLoopTurns } from '../../../test/support/loop-turns.js';
import { TimeSlice } from '../time-slice.js';
import { topLevelArray } from './json-layout.js';
import { parseJsonInSlices } from './parse-json-in-slices.js';

const SEED = Number(process.env.FC_SEED ?? 20_261_130);

/** Strings with what a parser gets wrong: escapes, quotes, surrogate pairs, lone surrogates, separators. */
const tricky = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom(
    'say "hi"\\',
    '😀 é 日本',
    '\ud83d',
    '\ude00x',
    ']},{"a":[',
    '\\\\"',
    '\u2028\u0000\u001f',
    '__proto__',
    '1e5',
  ),
);
const numbers = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(-0, 1e21, 5e-324, 0.1, 123456789012345680000),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tricky,
    numbers,
    fc.constantFrom(true, false, null),
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(fc.oneof(tricky, fc.constantFrom('a', 'b', '__proto__', '0', '7')), tie('value'), {
    maxKeys: 5,
  }),
})).value;

/** The text written compact, indented, or with spaces around every separator. */
function write(value: unknown, style: number): string {
  if (style === 1) return JSON.stringify(value, null, 2);
  if (style === 2)
    return ` ${JSON.stringify(value).replace(/("(?:[^"\\]|\\.)*")|([,:[\]{}])/g, (m, s) => (s ? m : ` ${m}\n\t`))} \r\n`;
  return JSON.stringify(value);
}

/** Parsed with every container read element by element (largeBytes 1) or batches of a few bytes. */
const sizes = fc.record({
  batchBytes: fc.integer({ min: 1, max: 64 }),
  largeBytes: fc.integer({ min: 1, max: 200 }),
});

const equalParses = (text: string, parsed: unknown) => {
  const expected = JSON.parse(text) as unknown;
  expect(parsed).toStrictEqual(expected);
  // Key order, `__proto__` as an own property and -0 are what toStrictEqual may not tell apart.
  expect(JSON.stringify(parsed)).toBe(JSON.stringify(expected));
  expect(Object.is(parsed, -0)).toBe(Object.is(expected, -0));
};

describe('parseJsonInSlices', () => {
  it('gives JSON.parse of random documents, at any batch size', async () => {
    await fc.assert(
      fc.asyncProperty(json, fc.nat({ max: 2 }), sizes, async (value, style, options) => {
        const text = write(value, style);
        const parsed = await parseJsonInSlices(Buffer.from(text), {
          ...options,
          slice: new TimeSlice({ sliceMs: 0 }),
        });
        equalParses(text, parsed.value);
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('keeps a repeated key in its first place with its last value, and __proto__ as an own key', async () => {
    const text = '{"a":1,"__proto__":{"x":1},"b":[1,2],"a":{"c":[3]},"7":0,"__proto__":2}';
    for (const largeBytes of [1, 4, 1000]) {
      const { value } = await parseJsonInSlices(Buffer.from(text), { largeBytes, batchBytes: 1 });
      expect(Object.keys(value as object)).toEqual(Object.keys(JSON.parse(text)));
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(JSON.stringify(value)).toBe(JSON.stringify(JSON.parse(text)));
    }
  });

  it('reads deep nesting past its depth limit', async () => {
    const text = `${'['.repeat(200)}"😀"${']'.repeat(200)}`;
    const { value } = await parseJsonInSlices(Buffer.from(text), { largeBytes: 1, batchBytes: 1 });
    expect(value).toStrictEqual(JSON.parse(text));
  });

  it('fails where JSON.parse fails, cut or changed anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(
        json,
        sizes,
        fc.nat(),
        fc.constantFrom('', ',', ']', '}', '"', ':', ' x', '\\', '{', '[', '\u00ff', '01'),
        async (value, options, at, insert) => {
          const text = JSON.stringify(value);
          const cut = at % (text.length + 1);
          // As bytes: a cut in a surrogate pair is a replacement character for both parsers.
          const bytes = Buffer.from(text.slice(0, cut) + insert + text.slice(cut + (insert === '' ? 1 : 0)));
          let expected: unknown;
          try {
            expected = JSON.parse(bytes.toString('utf8'));
          } catch {
            await expect(parseJsonInSlices(bytes, options)).rejects.toThrow(SyntaxError);
            return;
          }
          const parsed = await parseJsonInSlices(bytes, options);
          expect(JSON.stringify(parsed.value)).toBe(JSON.stringify(expected));
        },
      ),
      { seed: SEED, numRuns: 400 },
    );
  });

  it("gives the top-level array's layout as json-layout reads it", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(json, { minLength: 1, maxLength: 6 }),
        fc.nat({ max: 2 }),
        sizes,
        async (messages, style, options) => {
          const bytes = Buffer.from(write({ model: 'm', messages, tools: [{ a: 1 }] }, style));
          const parsed = await parseJsonInSlices(bytes, { ...options, layoutOf: 'messages' });
          expect(parsed.layout).toStrictEqual(topLevelArray(bytes, 'messages'));
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('gives no layout where json-layout gives none (a key twice, no array)', async () => {
    for (const text of ['{"messages":[1],"messages":[2]}', '{"messages":{"a":1}}', '{"messages":[]}']) {
      const parsed = await parseJsonInSlices(Buffer.from(text), { layoutOf: 'messages', largeBytes: 1 });
      expect(parsed.layout).toBeUndefined();
      expect(parsed.value).toStrictEqual(JSON.parse(text));
    }
  });

  it('gives the event loop turns between batches of a large document', async () => {
    const messages = Array.from({ length: 20_000 }, (_, i) => ({
      role: 'user',
      content: `message ${i} ${'x'.repeat(200)}`,
    }));
    const bytes = Buffer.from(JSON.stringify({ model: 'm', messages }));
    const slice = new TimeSlice({ sliceMs: 0 });
    const { result: parsed, turns: ticks } = await countLoopTurns(() =>
      parseJsonInSlices(bytes, { layoutOf: 'messages', slice }),
    );
    expect(isDeepStrictEqual(parsed.value, JSON.parse(bytes.toString()))).toBe(true);
    expect(slice.pauses).toBeGreaterThan(10);
    expect(ticks).toBeGreaterThan(10);
  });
});
