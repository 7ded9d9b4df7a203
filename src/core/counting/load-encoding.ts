/**
 * Loading a BPE encoding of `gpt-tokenizer`: at once on first use (the rank table costs
 * hundreds of milliseconds in one block), or ahead of time without holding the event loop
 * long ({@link loadEncodingInSlices}, behind `TokenCounter.ready()` and `CompactManager.ready()`):
 * the rank file is read asynchronously and copied into typed arrays (read-ranks.ts,
 * rank-table.ts) in slices of a few milliseconds, yielding between them.
 */
import { createRequire } from 'node:module';
import { TimeSlice } from '../time-slice.js';
import { requireGptTokenizer } from './gpt-tokenizer-file.js';
import { MergeCache } from './merge-cache.js';
import type { EncodingName } from './model-table.js';
import type { RankTable } from './rank-table.js';
import { readRanks } from './read-ranks.js';

/** What the counter uses of an encoding. */
export interface BpeEncoding {
  encode(text: string, options?: { disallowedSpecial?: Set<string> }): number[];
  /** `encode(text, options).length` without the array of tokens. */
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
}

const requireFromHere = createRequire(import.meta.url);

const encodings = new Map<EncodingName, BpeEncoding>();
const loading = new Map<EncodingName, Promise<BpeEncoding>>();
/** Encodings released by {@link releaseEncodings}: reused while the collector has not taken them. */
const released = new Map<EncodingName, WeakRef<BpeEncoding>>();

/** A loaded or released-but-still-alive encoding (a released one is held again). */
function loadedEncoding(name: EncodingName): BpeEncoding | undefined {
  const held = encodings.get(name);
  if (held) return held;
  const alive = released.get(name)?.deref();
  released.delete(name);
  if (alive) encodings.set(name, alive);
  return alive;
}

/** Loads an encoding on first use, in one block (the rank tables cost ~100-600 ms and ~40 MB each). */
export function loadEncoding(name: EncodingName): BpeEncoding {
  let encoding = loadedEncoding(name);
  if (!encoding) {
    encoding = requireFromHere(`gpt-tokenizer/encoding/${name}`) as BpeEncoding;
    encodings.set(name, encoding);
  }
  return encoding;
}

/**
 * Lets the collector take the encodings this module built (about 20 MB each) once nothing else
 * holds them: called when the last manager shuts down. An encoding asked for again before it is
 * collected is reused as is; after, it is built again. (One loaded by `require` as a fallback
 * stays in the module cache for the process's life.)
 */
export function releaseEncodings(): void {
  for (const [name, encoding] of encodings) released.set(name, new WeakRef(encoding));
  encodings.clear();
}

/** True when `name` is loaded (a call counts without loading it). */
export function encodingLoaded(name: EncodingName): boolean {
  return encodings.has(name) || released.get(name)?.deref() !== undefined;
}

/** The fields of gpt-tokenizer's `BytePairEncodingCore` (4.x) that hold the rank table. */
interface RankCore {
  bytePairRankDecoder: unknown[];
  bytePairStringRankEncoder: Pick<Map<string, number>, 'get'>;
  bytePairNonUtfRankDecoder: Map<number, Uint8Array>;
  bytePairNonUtfSortedEncoder: [Uint8Array, number][];
  mergeableBytePairRankCount: number;
}

function isRankCore(core: unknown): core is RankCore {
  const c = core as Partial<RankCore> | undefined;
  return (
    c !== undefined &&
    Array.isArray(c.bytePairRankDecoder) &&
    c.bytePairStringRankEncoder instanceof Map &&
    c.bytePairNonUtfRankDecoder instanceof Map &&
    Array.isArray(c.bytePairNonUtfSortedEncoder) &&
    typeof c.mergeableBytePairRankCount === 'number'
  );
}

/** The modules `GptEncoding` loads, leaves first. */
const GPT_TOKENIZER_MODULES = [
  'constants',
  'utfUtil',
  'util',
  'specialTokens',
  'BytePairEncodingCore',
  'functionCalling',
  'modelsChatEnabled.gen',
  'modelsMap',
  'mapping',
  'encodingParams/constants',
  'encodingParams/o200k_base',
  'encodingParams/cl100k_base',
  'modelParams',
];

/** Builds the encoder over `table` as gpt-tokenizer's constructor does, in slices. */
async function buildEncoding(
  name: EncodingName,
  table: RankTable,
  clock: TimeSlice,
): Promise<BpeEncoding | undefined> {
  // The encoder's modules one turn of the loop each (the pre-tokenizer's expressions and the
  // model tables are the heavy ones), then the class.
  for (const module of GPT_TOKENIZER_MODULES) {
    requireGptTokenizer(module);
    await clock.pause();
  }
  const { GptEncoding } = requireGptTokenizer('GptEncoding') as {
    GptEncoding: {
      getEncodingApi(name: string, ranks: () => unknown[]): BpeEncoding & Record<string, unknown>;
    };
  };
  const { compareUint8Arrays } = requireGptTokenizer('utfUtil') as {
    compareUint8Arrays(a: Uint8Array, b: Uint8Array): number;
  };
  await clock.pause();
  // An encoder over an empty table (cheap), then given the typed table (see rank-table.ts).
  const encoding = GptEncoding.getEncodingApi(name, () => []);
  const core = encoding.bytePairEncodingCoreProcessor;
  if (!isRankCore(core)) return undefined;
  const sorted = [...table.bytes].map(([rank, bytes]): [Uint8Array, number] => [bytes, rank]);
  sorted.sort((a, b) => compareUint8Arrays(a[0], b[0]));
  core.bytePairRankDecoder = table.decoder();
  core.bytePairStringRankEncoder = table;
  core.bytePairNonUtfRankDecoder = new Map(table.bytes);
  core.bytePairNonUtfSortedEncoder = sorted;
  core.mergeableBytePairRankCount = table.count;
  // Spread over small maps: one map's growth to 100,000 pieces rehashed it inside a count.
  const merges = core as { mergeCache?: unknown };
  if (merges.mergeCache instanceof Map) merges.mergeCache = new MergeCache<number[]>();
  const specials = (core as { specialTokensEncoder?: Map<string, number> }).specialTokensEncoder;
  encoding.vocabularySize = table.count + (specials?.size ?? 0);
  await clock.pause();
  // Compiles the pre-tokenizer's expression now rather than in the first count.
  encoding.countTokens('warm up 123', { disallowedSpecial: new Set() });
  return encoding;
}

/**
 * Builds `name` from its rank file in slices (undefined when the file or the encoder of this
 * `gpt-tokenizer` version is laid out otherwise); {@link loadEncodingInSlices} shares it.
 */
export async function buildEncodingInSlices(name: EncodingName): Promise<BpeEncoding | undefined> {
  const clock = new TimeSlice();
  try {
    return await buildEncoding(name, await readRanks(name, clock), clock);
  } catch {
    return undefined;
  }
}

/**
 * Loads `name` ahead of time without holding the event loop more than a few milliseconds at
 * a time (see the file comment); the same encoding a first use would load. Falls back to
 * loading at once if this version of `gpt-tokenizer` is laid out differently.
 */
export function loadEncodingInSlices(name: EncodingName): Promise<BpeEncoding> {
  const loaded = loadedEncoding(name);
  if (loaded) return Promise.resolve(loaded);
  let pending = loading.get(name);
  if (!pending) {
    pending = (async () => {
      const built = await buildEncodingInSlices(name);
      // Loaded at once meanwhile (a count came first): that one stays.
      const current = encodings.get(name);
      if (current) return current;
      if (!built) return loadEncoding(name);
      encodings.set(name, built);
      return built;
    })().finally(() => loading.delete(name));
    loading.set(name, pending);
  }
  return pending;
}
