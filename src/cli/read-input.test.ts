import { describe, expect, it } from 'vitest';
import { parseInput } from './read-input.js';

describe('parseInput', () => {
  it("names the file's own line of a broken JSONL record, blank lines counted", () => {
    const text = '\n{"role":"user","content":"a"}\n\n{"role":"assistant","content":"b"}\n{"role": broken}\n';
    expect(() => parseInput(text, 'chat.jsonl')).toThrow(/^chat\.jsonl line 5: not valid JSON \(.+\)$/);
  });

  it('reads JSONL with blank lines', () => {
    expect(parseInput('{"role":"user"}\n\n{"role":"assistant"}\n', 'x').messages).toHaveLength(2);
  });
});
