import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runSteps } from '../time-slice.js';
import { deepFreezeSteps, isLargeState, jsonCopySteps, LARGE_STATE_ENTRIES } from './json-copy.js';
import { MemorySessionStore, type SessionState } from './session-store.js';

/** What `JSON.stringify` turns into JSON, with the values it leaves out or changes. */
const leaf = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.date({ noInvalidDate: true }),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('node'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(fc.string(), fc.constant('__proto__'), fc.constant('7')), tie('node'), {
    maxKeys: 4,
  }),
})).node;

describe('jsonCopySteps', () => {
  it('copies a state as one JSON round trip does: the same text, key order included', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), value, { maxKeys: 5 }),
        fc.array(value, { minLength: 250, maxLength: 700 }),
        fc.dictionary(fc.string({ minLength: 1 }), value, { minKeys: 250, maxKeys: 700 }),
        (fields, long, many) => {
          const state = { ...fields, long, many, after: fields };
          const whole = JSON.stringify(JSON.parse(JSON.stringify(state)));
          expect(JSON.stringify(runSteps(jsonCopySteps(state)))).toBe(whole);
        },
      ),
      { numRuns: 15 },
    );
  });

  it('copies long arrays of strings and records of ids as JSON does (-0, NaN, undefined, nesting)', () => {
    const ids = Array.from({ length: 600 }, (_, i) => `id-${i}`);
    const records = Object.fromEntries(
      Array.from({ length: 600 }, (_, i) => [
        `h:${i}`,
        { kind: 'cleared', ref: `tool-${i}`, keepChars: i % 3 === 0 ? -0 : i, gone: undefined },
      ]),
    );
    const odd = [...ids.slice(0, 300), Number.NaN, undefined, { nested: { deep: [1] } }, -0];
    const state = { ids, records, odd, special: { ...records, 'h:x': { at: Number.POSITIVE_INFINITY } } };
    const copy = runSteps(jsonCopySteps(state));
    expect(copy).toStrictEqual(JSON.parse(JSON.stringify(state)));
    expect(copy.ids).not.toBe(ids);
    expect(copy.records['h:0']).not.toBe(records['h:0']);
    expect(Object.is(copy.records['h:0']!.keepChars, 0)).toBe(true);
  });

  it('keeps a frozen record JSON would give back as it is, and copies any other as JSON does', () => {
    const clean = (i: number) =>
      Object.freeze({ kind: 'cleared', ref: `tool-${i}`, keepChars: i, hash: 'h' });
    const odd: Record<string, unknown>[] = [
      Object.freeze({ ref: 'a', gone: undefined }),
      Object.freeze({ ref: 'b', keepChars: -0 }),
      Object.freeze({ ref: 'c', keepChars: Number.NaN }),
      Object.freeze({ ref: 'd', nested: Object.freeze({ deep: 1 }) }),
      Object.freeze(Object.defineProperty({ ref: 'e' }, 'hidden', { value: 1, enumerable: false })),
      Object.freeze(Object.defineProperty({ ref: 'f' }, 'got', { get: () => 1, enumerable: true })),
      Object.freeze({ ref: 'g', [Symbol('s')]: 1 }),
      { ref: 'h', keepChars: 1 },
    ];
    const records: Record<string, unknown> = {};
    for (let i = 0; i < 600; i++) records[`h:${i}`] = i < odd.length ? odd[i] : clean(i);
    const list = Array.from({ length: 600 }, (_, i) => (i < odd.length ? odd[i] : clean(i)));
    const state = { records, list };
    const copy = runSteps(jsonCopySteps(state)) as typeof state;
    expect(JSON.stringify(copy)).toBe(JSON.stringify(state));
    expect(copy).toStrictEqual(JSON.parse(JSON.stringify(state)));
    expect(copy.records['h:599']).toBe(records['h:599']);
    expect(copy.list[599]).toBe(list[599]);
    for (let i = 0; i < odd.length; i++) {
      expect(copy.records[`h:${i}`], `record ${i}`).not.toBe(odd[i]);
      expect(copy.list[i], `element ${i}`).not.toBe(odd[i]);
    }
  });

  it('keeps a `__proto__` key as an own property, as JSON.parse does', () => {
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, i]));
    const state = JSON.parse(`{"a":{"__proto__":{"x":1}},"many":${JSON.stringify(many)}}`);
    const copy = runSteps(jsonCopySteps(state)) as { a: object };
    expect(Object.getPrototypeOf(copy.a)).toBe(Object.prototype);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(state));
  });

  it('yields between parts of a large state and freezes every object of it', () => {
    const state = { ids: Array.from({ length: 5_000 }, (_, i) => ({ id: `m${i}` })) };
    expect(isLargeState(state)).toBe(true);
    expect(isLargeState({ ids: state.ids.slice(0, LARGE_STATE_ENTRIES) })).toBe(false);
    const steps = jsonCopySteps(state);
    let yields = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) yields++;
    expect(yields).toBeGreaterThan(10);
    const frozen = runSteps(deepFreezeSteps(step.value));
    expect(frozen.ids.every((item) => Object.isFrozen(item))).toBe(true);
    expect(Object.isFrozen(frozen.ids)).toBe(true);
  });

  it('copies a state of long strings in parts, sharing the strings (a stored counts record of 200k messages)', () => {
    const hashes = 'h1x2y '.repeat(60_000);
    const state = {
      sessionId: 's::counts',
      tokenCounts: { scope: 'o200k', hashes, tokens: '3 '.repeat(60_000) },
    };
    expect(isLargeState(state)).toBe(true);
    expect(isLargeState({ tokenCounts: { hashes: hashes.slice(0, 200_000) } })).toBe(false);
    const copy = runSteps(jsonCopySteps(state));
    expect(copy).toEqual(state);
    expect(copy.tokenCounts).not.toBe(state.tokenCounts);
  });

  it('gives a memory store the same state, large or small', async () => {
    const store = new MemorySessionStore();
    const rewrites = Object.fromEntries(
      Array.from({ length: 3_000 }, (_, i) => [`h:${i}`, { kind: 'cleared', ref: `tool-${i}` }]),
    );
    const state = {
      sessionId: 's',
      version: 1,
      coveredIds: Array.from({ length: 3_000 }, (_, i) => `c${i}`),
      rewrites,
      updatedAt: 0,
    } as unknown as SessionState;
    await store.set('s', state);
    const got = (await store.get('s')) as SessionState;
    expect(JSON.stringify(got)).toBe(JSON.stringify(state));
    expect(Object.isFrozen(got.rewrites?.['h:2999'])).toBe(true);
    expect(() => got.coveredIds.push('x')).toThrow(TypeError);
  });
});
