import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { countLoopTurns, escapedHistory } from '../../test/support/loop-turns.js';
import { parseInput, parseInputBytes, SLICED_INPUT_BYTES } from './read-input.js';

describe('parseInput', () => {
  it("names the file's own line of a broken JSONL record, blank lines counted", () => {
    const text = '\n{"role":"user","content":"a"}\n\n{"role":"assistant","content":"b"}\n{"role": broken}\n';
    expect(() => parseInput(text, 'chat.jsonl')).toThrow(/^chat\.jsonl line 5: not valid JSON \(.+\)$/);
  });

  it('reads JSONL with blank lines', () => {
    expect(parseInput('{"role":"user"}\n\n{"role":"assistant"}\n', 'x').messages).toHaveLength(2);
  });
});

describe('readInput of a large file (issue 47 point 2)', () => {
  const history = escapedHistory(8_000, 12);

  it('parses a large JSON file across turns of the loop, as parseInput reads it', async () => {
    const text = JSON.stringify({ messages: history, tools: [{ name: 't' }], system: 's' });
    expect(Buffer.byteLength(text)).toBeGreaterThan(SLICED_INPUT_BYTES);
    const { result: input, turns } = await countLoopTurns(() =>
      parseInputBytes(Buffer.from(text), 'big.json'),
    );
    expect(isDeepStrictEqual(input, parseInput(text, 'big.json'))).toBe(true);
    expect(turns).toBeGreaterThan(0);
  });

  it('gives the errors and the JSON Lines reading of parseInput', async () => {
    const lines = `${history.map((m) => JSON.stringify(m)).join('\n')}\n`;
    const read = await parseInputBytes(Buffer.from(lines), 'big.jsonl');
    expect(isDeepStrictEqual(read, parseInput(lines, 'big.jsonl'))).toBe(true);
    const broken = `${lines}{"role": broken}\n`;
    const error = (() => {
      try {
        parseInput(broken, 'big.jsonl');
      } catch (e) {
        return e as Error;
      }
    })();
    await expect(parseInputBytes(Buffer.from(broken), 'big.jsonl')).rejects.toThrow(error!.message);
    const object = JSON.stringify({ messages: history, tools: 'no' });
    await expect(parseInputBytes(Buffer.from(object), 'o.json')).rejects.toThrow(
      'o.json: "tools" must be an array',
    );
  });
});
