/**
 * Issue 47 point 1: the bound a first call decides its trigger from never under-estimates the
 * exact count, over random text (prose, CJK, emoji, code, base64, runs of one character, lone
 * surrogates) in every part of a message, with the counter's own slicing (hard cuts included)
 * and with a margin. Reproduce a failure with FC_SEED=<seed>.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scaled } from '../../../test/support/test-scale.js';
import type { CompactMessage } from '../messages/message.js';
import { BpeTokenCounter, type TokenCounter } from './token-counter.js';

const SEED = Number(process.env.FC_SEED ?? 20_261_128);
const RUNS = Number(process.env.FC_RUNS ?? scaled(300, 60));

const pieces = fc.oneof(
  fc.lorem({ maxCount: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  // CJK, emoji (surrogate pairs, ZWJ sequences), a lone surrogate.
  fc
    .array(
      fc.constantFrom('漢', '字', '日本語', 'テスト', '한국어', '😀', '👩‍💻', '🇫🇷', '\uD83D', 'é', '\u0301'),
      {
        maxLength: 120,
      },
    )
    .map((chars) => chars.join('')),
  fc.base64String({ maxLength: 600 }),
  fc
    .array(fc.constantFrom('function f(x) {', '  return x+1;', '}', 'const a = [1,2,3];', '\t\t//', '=>'), {
      maxLength: 40,
    })
    .map((lines) => lines.join('\n')),
  fc
    .tuple(fc.constantFrom('a', ' ', '0', '=', '漢', '😀'), fc.integer({ min: 1, max: 3_000 }))
    .map(([c, n]) => c.repeat(n)),
);
const text = fc.array(pieces, { maxLength: 6 }).map((parts) => parts.join(''));

const messageArbitrary: fc.Arbitrary<CompactMessage> = fc
  .record({
    role: fc.constantFrom('user', 'assistant', 'tool', 'system'),
    text,
    name: fc.option(text, { nil: undefined }),
    calls: fc.array(fc.record({ name: text, arguments: text }), { maxLength: 3 }),
    results: fc.array(text, { maxLength: 3 }),
    other: fc.boolean(),
  })
  .map(({ role, text, name, calls, results, other }) => ({
    id: 'x',
    role,
    kind: other ? 'other' : 'message',
    text,
    toolCalls: calls.map((call, i) => ({ id: `call_${i}`, ...call })),
    toolResults: results.map((output, i) => ({ callId: `call_${i}`, output })),
    index: 0,
    format: 'openai-chat',
    raw: other ? { type: 'item', text, name } : name === undefined ? { role } : { role, name },
  }));

const counters: [string, TokenCounter & { boundMessage: (message: CompactMessage) => number }][] = [
  ['o200k_base', new BpeTokenCounter({ encoding: 'o200k_base' })],
  ['cl100k_base', new BpeTokenCounter({ encoding: 'cl100k_base' })],
  // Small slices: many hard cuts and their corrections.
  ['o200k_base, 64-char slices', new BpeTokenCounter({ encoding: 'o200k_base', sliceChars: 64 })],
  ['o200k_base x1.25', new BpeTokenCounter({ encoding: 'o200k_base', margin: 1.25, sliceChars: 256 })],
];

describe('TokenCounter.boundMessage', () => {
  for (const [name, counter] of counters) {
    it(`never under-estimates countMessage (${name})`, async () => {
      await counter.ready?.();
      fc.assert(
        fc.property(messageArbitrary, (message) => {
          expect(counter.boundMessage(message)).toBeGreaterThanOrEqual(counter.countMessage(message));
        }),
        { seed: SEED, numRuns: RUNS },
      );
    });
  }

  it('is far from exact on ASCII prose (bytes, not tokens) yet within 8x of it', () => {
    const counter = counters[0]![1];
    const prose = 'The build failed because the test runner could not find the fixture file. '.repeat(50);
    const message: CompactMessage = {
      id: 'x',
      role: 'user',
      kind: 'message',
      text: prose,
      toolCalls: [],
      toolResults: [],
      index: 0,
      format: 'openai-chat',
      raw: { role: 'user' },
    };
    const exact = counter.countMessage(message);
    const bound = counter.boundMessage(message);
    expect(bound).toBeGreaterThan(exact);
    expect(bound).toBeLessThan(8 * exact);
  });

  it('counts a message with an image exactly (the image is a provider formula, not its bytes)', () => {
    const counter = counters[0]![1];
    const raw = {
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } },
      ],
    };
    const message: CompactMessage = {
      id: 'x',
      role: 'user',
      kind: 'message',
      text: 'what is this?',
      toolCalls: [],
      toolResults: [],
      index: 0,
      format: 'openai-chat',
      raw,
    };
    expect(counter.boundMessage(message)).toBe(counter.countMessage(message));
  });
});
