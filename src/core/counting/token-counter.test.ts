import { describe, expect, it } from 'vitest';
import type { CompactMessage } from '../messages/message.js';
import {
  BpeTokenCounter,
  countInSlices,
  formatToolSchemas,
  modelInfo,
  tokenCounterFor,
} from './token-counter.js';

const o200k = tokenCounterFor('gpt-4o');
const exactCount = (text: string) =>
  new BpeTokenCounter({ encoding: 'o200k_base', sliceChars: 10_000_000 }).countText(text);

function message(partial: Partial<CompactMessage>): CompactMessage {
  return {
    id: 'x',
    role: 'user',
    kind: 'message',
    text: '',
    toolCalls: [],
    toolResults: [],
    index: 0,
    format: 'openai-chat',
    raw: {},
    ...partial,
  };
}

describe('modelInfo', () => {
  it('maps OpenAI models to their real encodings', () => {
    for (const model of [
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4.1',
      'gpt-5',
      'o1',
      'o3-mini',
      'o4-mini',
      'openai/gpt-4o',
    ]) {
      expect(modelInfo(model)).toMatchObject({ encoding: 'o200k_base', exact: true });
    }
    for (const model of ['gpt-4', 'gpt-4-turbo', 'gpt-3.5-turbo']) {
      expect(modelInfo(model)).toMatchObject({ encoding: 'cl100k_base', exact: true });
    }
  });

  it('knows context windows and estimates unknown tokenizers', () => {
    expect(modelInfo('gpt-4o').contextWindow).toBe(128_000);
    expect(modelInfo('gpt-4').contextWindow).toBe(8_192);
    expect(modelInfo('claude-sonnet-4-5')).toMatchObject({ exact: false, contextWindow: 200_000 });
    expect(modelInfo('llama-3-70b')).toMatchObject({
      encoding: 'o200k_base',
      exact: false,
      contextWindow: 8_192,
    });
    expect(modelInfo('my-own-model')).toMatchObject({ encoding: 'o200k_base', exact: false, known: false });
  });
});

describe('BpeTokenCounter', () => {
  it('counts known examples exactly', () => {
    expect(o200k.countText('hello')).toBe(1);
    expect(o200k.countText('hello world')).toBe(2);
    expect(o200k.countText('')).toBe(0);
    expect(tokenCounterFor('gpt-4').countText('hello world')).toBe(2);
    expect(o200k.exact).toBe(true);
    expect(o200k.name).toBe('o200k_base');
  });

  it('counts special-token strings as ordinary text instead of throwing', () => {
    const text = 'before <|endoftext|> after <|im_start|>';
    expect(() => o200k.countText(text)).not.toThrow();
    expect(o200k.countText(text)).toBeGreaterThan(5);
    expect(tokenCounterFor('gpt-3.5-turbo').countText(text)).toBeGreaterThan(5);
  });

  it('applies the estimate margin to models without a public tokenizer', () => {
    const claude = tokenCounterFor('claude-3-5-sonnet');
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
    expect(claude.exact).toBe(false);
    expect(claude.name).toBe('estimate(o200k_base x1.25)');
    expect(claude.countText(text)).toBe(Math.ceil(o200k.countText(text) * 1.25));
  });

  it('rejects a margin below 1', () => {
    expect(() => new BpeTokenCounter({ encoding: 'o200k_base', margin: 0.5 })).toThrow(/margin/);
  });

  it('adds per-message overhead, names, tool calls and tool results', () => {
    const plain = o200k.countMessage(message({ role: 'user', text: 'hello' }));
    expect(plain).toBe(3 + o200k.countText('user') + 1);
    const named = o200k.countMessage(message({ role: 'user', text: 'hello', raw: { name: 'bob' } }));
    expect(named).toBe(plain + 1 + o200k.countText('bob'));
    const withCall = o200k.countMessage(
      message({
        role: 'assistant',
        text: '',
        toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }],
      }),
    );
    expect(withCall).toBeGreaterThan(o200k.countText('read_file') + o200k.countText('{"path":"a.ts"}'));
    const result = o200k.countMessage(
      message({ role: 'tool', toolResults: [{ callId: 'c1', output: 'contents of a.ts' }] }),
    );
    expect(result).toBeGreaterThan(o200k.countText('contents of a.ts'));
    const other = o200k.countMessage(
      message({ kind: 'other', raw: { type: 'web_search_call', id: 'ws_1', status: 'completed' } }),
    );
    expect(other).toBeGreaterThan(5);
  });

  it('counts tool schemas in the namespace form, unknown shapes as JSON', () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'read_file',
          description: 'Read a file',
          parameters: {
            type: 'object',
            properties: {
              path: { type: 'string', description: 'File path' },
              lines: { type: 'array', items: { type: 'integer' } },
              mode: { enum: ['a', 'b'] },
              opts: { type: 'object', properties: { deep: { type: 'boolean' } } },
            },
            required: ['path'],
          },
        },
      },
      { name: 'noop', input_schema: { type: 'object', properties: {} } },
    ];
    const { text, unknown } = formatToolSchemas([...tools, { type: 'web_search' }]);
    expect(text).toContain('type read_file = (_: {');
    expect(text).toContain('// File path\npath: string,');
    expect(text).toContain('lines?: number[],');
    expect(text).toContain('mode?: "a" | "b",');
    expect(text).toContain('type noop = () => any;');
    expect(unknown).toEqual([{ type: 'web_search' }]);
    expect(o200k.countTools(tools)).toBe(o200k.countText(formatToolSchemas(tools).text) + 9);
    expect(o200k.countTools([])).toBe(0);
    expect(o200k.countTools([...tools, { type: 'web_search' }])).toBeGreaterThan(o200k.countTools(tools));
  });
});

describe('countInSlices', () => {
  it('matches the unsliced count on realistic long text within 0.1%', () => {
    const text = Array.from(
      { length: 400 },
      (_, i) =>
        `Line ${i}: the session token for user ${i * 7} is rotated every 15 minutes; see src/auth/token.ts.\n`,
    ).join('');
    const sliced = o200k.countText(text);
    const exact = exactCount(text);
    expect(Math.abs(sliced - exact) / exact).toBeLessThan(0.001);
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(3000);
    const pieces: string[] = [];
    countInSlices(
      text,
      (s) => {
        pieces.push(s);
        return s.length;
      },
      101,
    );
    expect(pieces.length).toBeGreaterThan(10);
    for (const piece of pieces) expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
  });

  it('counts pathological inputs (long runs) in bounded slices with small error', () => {
    const cases = [
      'a'.repeat(100_000),
      ' '.repeat(100_000),
      Buffer.from('x'.repeat(75_000)).toString('base64'),
      '汉字'.repeat(50_000),
    ];
    for (const text of cases) {
      const count = o200k.countText(text);
      expect(count).toBeGreaterThan(0);
      // Slice boundaries can only add a handful of tokens per 2k characters.
      const sample = text.slice(0, 8192);
      const perChar = exactCount(sample) / sample.length;
      expect(count).toBeGreaterThan(perChar * text.length * 0.95);
      expect(count).toBeLessThan(perChar * text.length * 1.05 + 60);
    }
  });
});
