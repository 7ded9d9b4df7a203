import { writeFileSync } from 'node:fs';

/** Options of {@link writeTinyGguf}. */
export interface TinyGgufOptions {
  /**
   * Seed of the weights' pseudo-random generator (same seed, same file).
   * @default 1
   */
  seed?: number;
  /**
   * Embedding width.
   * @default 64
   */
  embeddingLength?: number;
  /**
   * Training context length written into the file.
   * @default 4096
   */
  contextLength?: number;
  /**
   * Extra word tokens besides the byte tokens (`▁` + word).
   * @default a few dozen common English words
   */
  words?: string[];
}

const DEFAULT_WORDS = [
  'the',
  'a',
  'and',
  'to',
  'of',
  'in',
  'is',
  'for',
  'on',
  'with',
  'summary',
  'goal',
  'task',
  'file',
  'branch',
  'decision',
  'open',
  'test',
  'fix',
  'migrate',
  'service',
  'table',
  'keep',
  'never',
  'drop',
  'done',
];

// GGUF metadata value types.
const UINT32 = 4;
const INT32 = 5;
const FLOAT32 = 6;
const STRING = 8;
const ARRAY = 9;
const ALIGNMENT = 32;

type MetadataValue =
  | { type: 'u32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'string'; value: string }
  | { type: 'strings'; value: string[] }
  | { type: 'f32s'; value: number[] }
  | { type: 'i32s'; value: number[] };

class ByteWriter {
  private chunks: Buffer[] = [];
  length = 0;
  private push(buffer: Buffer): void {
    this.chunks.push(buffer);
    this.length += buffer.length;
  }
  u32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(value);
    this.push(b);
  }
  i32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(value);
    this.push(b);
  }
  u64(value: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(value));
    this.push(b);
  }
  f32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(value);
    this.push(b);
  }
  string(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  bytes(buffer: Buffer): void {
    this.push(buffer);
  }
  pad(): void {
    const rest = this.length % ALIGNMENT;
    if (rest !== 0) this.push(Buffer.alloc(ALIGNMENT - rest));
  }
  toBuffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** A small deterministic PRNG (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Writes a tiny Llama-architecture GGUF file with random weights (F32) and a SentencePiece-style
 * vocabulary (`<unk>`, `<s>`, `</s>`, the 256 byte tokens, a few words): enough for
 * `node-llama-cpp` to load it, tokenize, and generate (meaningless) text, so a local
 * summarizer's wiring can be tested without downloading real weights. About 200 KB.
 *
 * @example
 * ```ts
 * writeTinyGguf(join(tmpdir(), 'tiny.gguf'));
 * const local = llamaCppSummarizer({ modelPath: join(tmpdir(), 'tiny.gguf') });
 * ```
 */
export function writeTinyGguf(path: string, options: TinyGgufOptions = {}): void {
  const next = random(options.seed ?? 1);
  const embd = options.embeddingLength ?? 64;
  const heads = 4;
  const ff = embd * 2;
  const words = options.words ?? DEFAULT_WORDS;

  const { tokens, types, scores } = vocabulary(words);
  const vocab = tokens.length;

  const metadata: [string, MetadataValue][] = [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: 'tiny-random-llama' }],
    ['general.alignment', { type: 'u32', value: ALIGNMENT }],
    ['llama.context_length', { type: 'u32', value: options.contextLength ?? 4096 }],
    ['llama.embedding_length', { type: 'u32', value: embd }],
    ['llama.block_count', { type: 'u32', value: 1 }],
    ['llama.feed_forward_length', { type: 'u32', value: ff }],
    ['llama.attention.head_count', { type: 'u32', value: heads }],
    ['llama.attention.head_count_kv', { type: 'u32', value: heads }],
    ['llama.rope.dimension_count', { type: 'u32', value: embd / heads }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    ['llama.vocab_size', { type: 'u32', value: vocab }],
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'strings', value: tokens }],
    ['tokenizer.ggml.scores', { type: 'f32s', value: scores }],
    ['tokenizer.ggml.token_type', { type: 'i32s', value: types }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: 2 }],
    ['tokenizer.ggml.unknown_token_id', { type: 'u32', value: 0 }],
  ];

  // ggml dimension order: ne[0] first (the row length).
  const tensors: [string, number[]][] = [
    ['token_embd.weight', [embd, vocab]],
    ['output_norm.weight', [embd]],
    ['output.weight', [embd, vocab]],
    ['blk.0.attn_norm.weight', [embd]],
    ['blk.0.attn_q.weight', [embd, embd]],
    ['blk.0.attn_k.weight', [embd, embd]],
    ['blk.0.attn_v.weight', [embd, embd]],
    ['blk.0.attn_output.weight', [embd, embd]],
    ['blk.0.ffn_norm.weight', [embd]],
    ['blk.0.ffn_gate.weight', [embd, ff]],
    ['blk.0.ffn_down.weight', [ff, embd]],
    ['blk.0.ffn_up.weight', [embd, ff]],
  ];

  const header = new ByteWriter();
  header.bytes(Buffer.from('GGUF', 'ascii'));
  header.u32(3);
  header.u64(tensors.length);
  header.u64(metadata.length);
  for (const [key, entry] of metadata) writeMetadata(header, key, entry);

  const data = new ByteWriter();
  const offsets: number[] = [];
  for (const [name, dims] of tensors) {
    offsets.push(data.length);
    const count = dims.reduce((a, b) => a * b, 1);
    const values = Buffer.alloc(count * 4);
    const isNorm = name.endsWith('norm.weight');
    for (let i = 0; i < count; i++) values.writeFloatLE(isNorm ? 1 : (next() - 0.5) * 0.5, i * 4);
    data.bytes(values);
    data.pad();
  }
  for (const [i, [name, dims]] of tensors.entries()) {
    header.string(name);
    header.u32(dims.length);
    for (const dim of dims) header.u64(dim);
    header.u32(0); // GGML_TYPE_F32
    header.u64(offsets[i]!);
  }
  header.pad();
  writeFileSync(path, Buffer.concat([header.toBuffer(), data.toBuffer()]));
}

/** The special tokens, the 256 byte tokens, then the words, with their types and scores. */
function vocabulary(words: readonly string[]): { tokens: string[]; types: number[]; scores: number[] } {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3];
  const scores = [0, 0, 0];
  for (let byte = 0; byte < 256; byte++) {
    tokens.push(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6);
    scores.push(0);
  }
  tokens.push('▁');
  types.push(1);
  scores.push(-1);
  for (const [i, word] of words.entries()) {
    tokens.push(`▁${word}`);
    types.push(1);
    scores.push(-2 - i * 0.01);
  }
  return { tokens, types, scores };
}

/** One metadata entry: its key, its type code, its value. */
function writeMetadata(header: ByteWriter, key: string, entry: MetadataValue): void {
  header.string(key);
  switch (entry.type) {
    case 'u32':
      header.u32(UINT32);
      header.u32(entry.value);
      break;
    case 'f32':
      header.u32(FLOAT32);
      header.f32(entry.value);
      break;
    case 'string':
      header.u32(STRING);
      header.string(entry.value);
      break;
    case 'strings':
      header.u32(ARRAY);
      header.u32(STRING);
      header.u64(entry.value.length);
      for (const value of entry.value) header.string(value);
      break;
    case 'f32s':
      header.u32(ARRAY);
      header.u32(FLOAT32);
      header.u64(entry.value.length);
      for (const value of entry.value) header.f32(value);
      break;
    case 'i32s':
      header.u32(ARRAY);
      header.u32(INT32);
      header.u64(entry.value.length);
      for (const value of entry.value) header.i32(value);
      break;
  }
}
