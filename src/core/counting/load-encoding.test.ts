/**
 * Issue 38 point 1: the encoding loaded ahead in slices (`ready()`) is the one a first count
 * loads at once, token for token, and its load lets the event loop turn while it runs.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../manager/compact-manager.js';
import { buildEncodingInSlices } from './load-encoding.js';
import { BpeTokenCounter } from './token-counter.js';

const requireHere = createRequire(import.meta.url);
type Encode = { encode(text: string, options?: { disallowedSpecial?: Set<string> }): number[] };

const SAMPLES = [
  'The quick brown fox jumps over the lazy dog.',
  'def refresh_token(self):\n    return self._client.post("/oauth/token", data={"grant_type": "refresh"})\n',
  '東京都の天気は晴れです。明日は雨が降るでしょう。',
  'Emoji 🧪🚀 and accents: café, naïve, Ångström, ß, İstanbul.',
  '\u0000\u0001\u00ff binary-ish \ud83d\ude00 \t\t  spaced   out\r\n',
  'ƒ(x) = ∑ᵢ xᵢ² — «guillemets» and “quotes” <|endoftext|>',
  `${'a'.repeat(300)} ${'0123456789'.repeat(20)}`,
];

describe('the tokenizer loaded in slices', () => {
  for (const name of ['o200k_base', 'cl100k_base'] as const) {
    it(`${name}: the same tokens as the encoding a first count loads, and the loop turns meanwhile`, async () => {
      let turns = 0;
      let loaded = false;
      const tick = () => {
        turns++;
        if (!loaded) setImmediate(tick);
      };
      setImmediate(tick);
      const sliced = (await buildEncodingInSlices(name)) as Encode;
      loaded = true;
      // Built (not the layout fallback), in dozens of slices: never one block for the whole load.
      expect(sliced).toBeDefined();
      expect(turns).toBeGreaterThan(20);
      const direct = requireHere(`gpt-tokenizer/encoding/${name}`) as Encode;
      const none = { disallowedSpecial: new Set<string>() };
      for (const text of SAMPLES) expect(sliced.encode(text, none), text).toEqual(direct.encode(text, none));
    });
  }

  it('manager.ready() loads the counter ahead; calls made meanwhile wait for the same load', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
    const [, result] = await Promise.all([
      manager.ready(),
      manager.compact('s', [{ role: 'user', content: 'hello there' }]),
    ]);
    expect(result.tokensBefore).toBeGreaterThan(0);
    await manager.ready();
    expect(new BpeTokenCounter({ encoding: 'o200k_base' }).countText('hello world')).toBe(2);
    await manager.shutdown();
  });
});

describe('the rank table read as data, not code', () => {
  for (const name of ['o200k_base', 'cl100k_base'] as const) {
    it(`${name}: every rank equals what evaluating the file gives, with no chunk evaluated`, async () => {
      const { readFile } = await import('node:fs/promises');
      const { runInThisContext } = await import('node:vm');
      const { readRanks, rankChunksEvaluated } = await import('./load-encoding.js');
      const { TimeSlice } = await import('../time-slice.js');
      const text = await readFile(requireHere.resolve(`gpt-tokenizer/bpeRanks/${name}`), 'utf8');
      const expected: unknown[] = [];
      for (const block of text.matchAll(/const c\d+ = (\[[\s\S]*?\n\]);/g))
        for (const rank of runInThisContext(block[1] as string) as unknown[]) expected.push(rank);
      const before = rankChunksEvaluated;
      const ranks = await readRanks(name, new TimeSlice());
      const { rankChunksEvaluated: after } = await import('./load-encoding.js');
      expect(ranks.length).toBe(expected.length);
      expect(ranks).toEqual(expected);
      // Evaluated chunks leave their compiled scripts in the heap for the process's life.
      expect(after - before).toBe(0);
    });
  }

  it('reads what JavaScript escapes and raw tabs spell, as JSON would not', async () => {
    const { parseRankChunk } = await import('./load-encoding.js');
    const chunk = [
      '\t"\\x07",',
      '\t"\\0",',
      '\t"\t\t",',
      '\t"it\\\'s",',
      '\t"\\\\x41",',
      '\t[',
      '\t\t161,',
      '\t\t0',
      '\t],',
    ].join('\n');
    expect(parseRankChunk(chunk)).toEqual(['\x07', '\0', '\t\t', "it's", '\\x41', [161, 0]]);
  });
});
