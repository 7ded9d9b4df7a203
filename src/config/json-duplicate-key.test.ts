import { describe, expect, it } from 'vitest';
import { findDuplicateKey } from './json-duplicate-key.js';

describe('findDuplicateKey', () => {
  it('names the first repeated key by its path and line', () => {
    expect(findDuplicateKey('{"a": 1,\n"b": {"c": 1,\n "c": 2}}')).toEqual({ path: ['b', 'c'], line: 3 });
    expect(findDuplicateKey('{"list": [{"x": 1}, {"x": 1, "x": 2}]}')).toEqual({
      path: ['list', 1, 'x'],
      line: 1,
    });
    expect(findDuplicateKey('{"a\\"b": 1, "a\\u0022b": 2}')).toEqual({ path: ['a"b'], line: 1 });
  });

  it('the same key in sibling objects, and braces, commas and quotes inside strings, are no duplicate', () => {
    const text = JSON.stringify({
      policy: { keep: 1 },
      summarizer: { keep: 2, text: '{"keep": 3, "keep": 4}, \\"', list: [{ keep: 1 }, { keep: 2 }] },
      keep: ['keep', 'keep'],
    });
    expect(findDuplicateKey(text)).toBeUndefined();
    expect(findDuplicateKey('[1, "a", {"a": 1}]')).toBeUndefined();
  });
});
