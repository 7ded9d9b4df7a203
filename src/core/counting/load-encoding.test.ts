/**
 * Issue 38 point 1: the encoding loaded ahead in slices (`ready()`) is the one a first count
 * loads at once, token for token, and its load lets the event loop turn while it runs. Issue 47
 * point 2: its ranks are held in typed arrays (no 200,000 strings and map entries for every
 * scavenge of the load to copy), with the same rank for every token and the same string for
 * every rank, and a call made while it loads counts exactly.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../manager/compact-manager.js';
import { buildEncodingInSlices, encodingLoaded, loadEncodingInSlices } from './load-encoding.js';
import { MergeCache } from './merge-cache.js';
import { RankTable } from './rank-table.js';
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

/** Prose, code, CJK, emoji (ZWJ sequences, flags, skin tones), RTL, controls, long runs. */
const VARIED = [
  ...SAMPLES,
  'export async function main(argv: string[]): Promise<number> {\n\tconst { values } = parseArgs({ args: argv });\n\treturn values.verbose ? 1 : 0;\n}\n',
  '👩‍👩‍👧‍👦 👍🏽 🇯🇵🇫🇷 🏳️‍🌈 ❤️‍🔥 🫠🫶🏿 ✍🏻 ⚡️⚡ 🧑🏼‍💻',
  'مرحبا بالعالم — שלום עולם — Привет, мир! — Γειά σου Κόσμε — नमस्ते दुनिया — 안녕하세요 세계',
  'SELECT u.id, COUNT(*) AS n FROM users u JOIN orders o ON o.user_id = u.id WHERE o.total > 100 GROUP BY u.id;',
  '{"key": "value", "nested": {"list": [1, 2.5, -3e10, true, null], "escaped": "line\\nbreak \\u00e9"}}',
  '\u200b\u200d\ufeff zero-width, \u00a0nbsp, \u2028line sep\u2029para sep, \ud800 lone surrogate',
  `${'🙂'.repeat(64)}${'ab'.repeat(500)}${' '.repeat(200)}\n\n\n${'\t'.repeat(40)}x`,
  'Ünïcödé ẞ ﬁ ﬀ Ǆ ǅ ǆ ᾏ ℌ ℍ ℕ ℙ ℚ ℝ ℤ №™ ½ ⅓ ¼ ① ② ③ Ⅻ',
  '<|endoftext|><|im_start|>system<|im_end|> <|fim_prefix|> literal special-token text',
];

describe('the rank table in typed arrays (issue 47 point 2)', () => {
  it('a count made while the table loads in slices counts exactly, and the load then serves the same encoding', async () => {
    expect(encodingLoaded('o200k_base')).toBe(false);
    const loading = loadEncodingInSlices('o200k_base');
    // Counted during the load: loaded at once (require), exact.
    const counter = new BpeTokenCounter({ encoding: 'o200k_base' });
    const during = VARIED.map((text) => counter.countText(text));
    const loaded = await loading;
    const direct = requireHere('gpt-tokenizer/encoding/o200k_base') as Encode;
    const none = { disallowedSpecial: new Set<string>() };
    expect(during).toEqual(VARIED.map((text) => direct.encode(text, none).length));
    // The sliced load gives way to the encoding loaded at once meanwhile (one per process).
    expect(VARIED.map((text) => loaded.encode(text, none).length)).toEqual(during);
  });

  it('a manager call made while ready() loads counts with the sliced table, as require would, and as a call after the load', async () => {
    // cl100k_base (gpt-4): not loaded yet in this process, so the call comes during the load.
    expect(encodingLoaded('cl100k_base')).toBe(false);
    const messages = VARIED.map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content }));
    const first = new CompactManager({ model: 'gpt-4', maxContextTokens: 1_000_000 });
    const [, during] = await Promise.all([first.ready(), first.compact('a', messages)]);
    const after = new CompactManager({ model: 'gpt-4', maxContextTokens: 1_000_000 });
    const later = await after.compact('b', messages);
    expect(during.tokensBefore).toBe(later.tokensBefore);
    const direct = requireHere('gpt-tokenizer/encoding/cl100k_base') as Encode;
    const none = { disallowedSpecial: new Set<string>() };
    expect(VARIED.map((text) => first.counter.countText(text))).toEqual(
      VARIED.map((text) => direct.encode(text, none).length),
    );
    await Promise.all([first.shutdown(), after.shutdown()]);
  });

  for (const name of ['o200k_base', 'cl100k_base'] as const) {
    it(`${name}: every token's rank and every rank's token are require's encoder's, from typed arrays`, async () => {
      type Core = {
        bytePairStringRankEncoder: { get(key: string): number | undefined };
        bytePairRankDecoder: unknown[];
        bytePairNonUtfSortedEncoder: [Uint8Array, number][];
      };
      const sliced = (await buildEncodingInSlices(name)) as unknown as {
        bytePairEncodingCoreProcessor: Core;
      };
      const direct = (requireHere(`gpt-tokenizer/encoding/${name}`) as { default: typeof sliced }).default;
      const ours = sliced.bytePairEncodingCoreProcessor;
      const theirs = direct.bytePairEncodingCoreProcessor;
      // Not a Map of strings: 200,000 strings and entries that every scavenge of the load copied.
      expect(ours.bytePairStringRankEncoder).toBeInstanceOf(RankTable);
      const table = ours.bytePairStringRankEncoder as RankTable;
      let strings = 0;
      const ranks = theirs.bytePairRankDecoder;
      expect(table.count).toBe(ranks.length);
      for (let rank = 0; rank < ranks.length; rank++) {
        const token = ranks[rank];
        const decoded = ours.bytePairRankDecoder[rank];
        if (typeof token !== 'string') {
          if (!(decoded instanceof Uint8Array)) expect(decoded, `rank ${rank}`).toBeInstanceOf(Uint8Array);
          continue;
        }
        strings++;
        // One expect per mismatch only (400,000 expects would take seconds).
        if (table.get(token) !== theirs.bytePairStringRankEncoder.get(token) || decoded !== token) {
          expect(table.get(token), JSON.stringify(token)).toBe(theirs.bytePairStringRankEncoder.get(token));
          expect(decoded, `rank ${rank}`).toBe(token);
        }
      }
      expect(table.size).toBe(strings);
      expect(ours.bytePairRankDecoder[ranks.length]).toBeUndefined();
      expect(table.get('not a token at all, surely')).toBeUndefined();
      expect(table.get('')).toBeUndefined();
      expect(ours.bytePairNonUtfSortedEncoder).toEqual(theirs.bytePairNonUtfSortedEncoder);
      const none = { disallowedSpecial: new Set<string>() };
      const encode = (encoding: unknown, text: string) => (encoding as Encode).encode(text, none);
      const decode = (encoding: unknown, tokens: number[]) =>
        (encoding as { decode(tokens: number[]): string }).decode(tokens);
      for (const text of VARIED) {
        const tokens = encode(direct, text);
        expect(encode(sliced, text), text).toEqual(tokens);
        expect(decode(sliced, tokens)).toBe(decode(direct, tokens));
      }
    });
  }
});

describe('the merge cache in small maps (issue 47 point 2)', () => {
  it('counts as require does while the cache fills past 65,536 pieces and evicts, each shard a few thousand', async () => {
    const sliced = (await buildEncodingInSlices('cl100k_base')) as unknown as Encode & {
      bytePairEncodingCoreProcessor: { mergeCache: unknown };
    };
    const direct = requireHere('gpt-tokenizer/encoding/cl100k_base') as Encode;
    const cache = sliced.bytePairEncodingCoreProcessor.mergeCache;
    expect(cache).toBeInstanceOf(MergeCache);
    const none = { disallowedSpecial: new Set<string>() };
    // Words no rank holds whole (merged, so cached): 120,000 distinct ones, past the cache's 100,000.
    const word = (i: number) => `q${(i * 7919).toString(36)}zx${(i % 97).toString(36)}`;
    for (let part = 0; part < 12; part++) {
      const text = Array.from({ length: 10_000 }, (_, i) => word(part * 10_000 + i)).join(' ');
      expect(sliced.encode(text, none).length).toBe(direct.encode(text, none).length);
    }
    const merges = cache as MergeCache<number[]>;
    expect(merges.size).toBeLessThanOrEqual(100_000);
    expect(merges.size).toBeGreaterThan(65_536);
    expect(Math.max(...merges.shardSizes())).toBeLessThan(8_192);
    // Evicted pieces are merged again, to the same tokens.
    const again = Array.from({ length: 2_000 }, (_, i) => word(i)).join(' ');
    expect(sliced.encode(again, none)).toEqual(direct.encode(again, none));
  });
});

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
      const { readRanks, rankChunksEvaluated } = await import('./read-ranks.js');
      const { TimeSlice } = await import('../time-slice.js');
      const text = await readFile(requireHere.resolve(`gpt-tokenizer/bpeRanks/${name}`), 'utf8');
      const expected: unknown[] = [];
      for (const block of text.matchAll(/const c\d+ = (\[[\s\S]*?\n\]);/g))
        for (const rank of runInThisContext(block[1] as string) as unknown[]) expected.push(rank);
      const before = rankChunksEvaluated;
      const table = await readRanks(name, new TimeSlice());
      const { rankChunksEvaluated: after } = await import('./read-ranks.js');
      expect(table.count).toBe(expected.length);
      const ranks = Array.from({ length: table.count }, (_, rank) => {
        const token = table.decode(rank);
        return token instanceof Uint8Array ? [...token] : token;
      });
      expect(ranks).toEqual(expected);
      // Evaluated chunks leave their compiled scripts in the heap for the process's life.
      expect(after - before).toBe(0);
    });
  }

  it('reads what JavaScript escapes and raw tabs spell, as JSON would not', async () => {
    const { parseRankChunk } = await import('./read-ranks.js');
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
