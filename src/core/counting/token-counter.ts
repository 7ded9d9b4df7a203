import { invalidConfig } from '../errors.js';
import { elideMedia, type MediaPart, mediaParts } from '../messages/formats/media-parts.js';
import type { CompactMessage } from '../messages/message.js';
import { releaseProcessCaches } from '../process-caches.js';
import { nextTurn, type Steps } from '../time-slice.js';
import { ANTHROPIC_IMAGE_RULE, type ImageRule, imageRuleFor, OPENAI_TILE_RULE } from './count-image.js';
import {
  BOUNDARY_WINDOW,
  countInSlices,
  countInSlicesSteps,
  DEFAULT_SLICE_CHARS,
} from './count-in-slices.js';
import { mediaTokens } from './count-media.js';
import { piecesCounterOf, warmPiecesCounter } from './count-pieces.js';
import { formatToolSchemas } from './format-tool-schemas.js';
import { type BpeEncoding, loadEncoding, loadEncodingInSlices, releaseEncodings } from './load-encoding.js';
import { type EncodingName, modelInfo } from './model-table.js';

export { countInSlices, DEFAULT_SLICE_CHARS } from './count-in-slices.js';
export { formatToolSchemas } from './format-tool-schemas.js';
export { type EncodingName, type ModelInfo, modelInfo } from './model-table.js';

/**
 * Counts tokens of text, messages and tool schemas for one model. Pluggable: pass your own
 * to `CompactManager` for a model whose tokenizer you have.
 */
export interface TokenCounter {
  /** E.g. `o200k_base`, `cl100k_base`, `estimate(o200k_base x1.25)`. */
  readonly name: string;
  /** True when counts are exact for the model; false for estimates. */
  readonly exact: boolean;
  /** Tokens of plain text. Never throws, never stalls (long runs are counted in slices). */
  countText(text: string): number;
  /** Tokens of one message, including the provider's per-message overhead. */
  countMessage(message: CompactMessage): number;
  /** Tokens of the tool (function) schemas sent with a request. */
  countTools(tools: readonly unknown[]): number;
  /**
   * A bound of {@link countMessage} that is never below it and costs no tokenizing (from the
   * message's UTF-8 bytes): the first call of a long history nobody has counted decides its
   * trigger from it, and counts exactly after the call. Optional: without it, a first call
   * counts exactly.
   */
  boundMessage?(message: CompactMessage): number;
  /** Tokens the provider adds once per request (reply priming). */
  readonly requestOverhead: number;
  /**
   * Loads what the counter needs (a tokenizer's tables) ahead of the first count, without
   * holding the event loop long; resolves when counting no longer loads anything. Optional:
   * a counter without it is ready at once.
   */
  ready?(): Promise<void>;
}

/** Per-message overheads, from OpenAI's published counting method for chat models. */
export const OPENAI_MESSAGE_OVERHEAD = Object.freeze({
  /** `<|start|>{role}\n ... <|end|>` framing of every message. */
  perMessage: 3,
  /** A `name` field. */
  perName: 1,
  /** Each tool call in an assistant message (id, type, function framing). */
  perToolCall: 8,
  /** Reply priming added once per request. */
  perRequest: 3,
  /** Tool schemas: the namespace wrapper around the function definitions. */
  toolsWrapper: 9,
});

/**
 * The safety margin of estimated counts for models without a public tokenizer (Claude and
 * others): o200k_base tokens times this factor. Claude's tokenizer yields roughly 10-25%
 * more tokens than o200k_base on code and prose; 1.25 keeps estimates on the safe side.
 * @default 1.25
 */
export const DEFAULT_ESTIMATE_MARGIN = 1.25;

/** Options of {@link BpeTokenCounter}. */
export interface BpeTokenCounterOptions {
  /** The encoding. */
  encoding: EncodingName;
  /**
   * Multiply every count by this factor and round up (estimates for other tokenizers).
   * @default 1
   */
  margin?: number;
  /** @default DEFAULT_SLICE_CHARS */
  sliceChars?: number;
  /**
   * How images are counted. Images are provider formulas, never multiplied by `margin`.
   * @default Anthropic's rule for Anthropic-format messages, OpenAI's tile rule otherwise
   */
  imageRule?: ImageRule;
}

/** Set by {@link BpeTokenCounter}'s static block: its private steps, for {@link countMessageSteps}. */
let messageSteps: (counter: BpeTokenCounter, message: CompactMessage) => Steps<number>;

/**
 * Counts with a real BPE encoding (o200k_base or cl100k_base) through `gpt-tokenizer`,
 * chosen by measurement (bench/tokenizer-choice.mjs): the fastest cold start and the
 * smallest memory of the pure-JS tokenizers, identical counts to tiktoken.
 * Special-token strings such as `<|endoftext|>` are counted as ordinary text.
 */
export class BpeTokenCounter implements TokenCounter {
  readonly name: string;
  readonly exact: boolean;
  readonly requestOverhead: number;
  readonly #encodingName: EncodingName;
  readonly #margin: number;
  readonly #sliceChars: number;
  readonly #imageRule: ImageRule | undefined;
  #encoding: BpeEncoding | undefined;
  // Counted without an array of tokens or a match per piece (count-pieces.ts, issue 47 point 2).
  readonly #encode = (text: string) => piecesCounterOf(this.#load())(text);

  constructor(options: BpeTokenCounterOptions) {
    this.#encodingName = options.encoding;
    this.#margin = options.margin ?? 1;
    if (!(this.#margin >= 1) || !Number.isFinite(this.#margin))
      throw invalidConfig('tokenCounter.margin', 'must be a number >= 1');
    this.#sliceChars = options.sliceChars ?? DEFAULT_SLICE_CHARS;
    this.#imageRule = options.imageRule;
    this.exact = this.#margin === 1;
    this.name = this.exact ? options.encoding : `estimate(${options.encoding} x${this.#margin})`;
    this.requestOverhead = this.#scale(OPENAI_MESSAGE_OVERHEAD.perRequest);
  }

  #load(): BpeEncoding {
    this.#encoding ??= loadEncoding(this.#encodingName);
    return this.#encoding;
  }

  /**
   * Loads the encoding in slices of a few milliseconds (see `loadEncodingInSlices`): await it
   * at start-up so the first count does not load the rank tables in one block.
   */
  async ready(): Promise<void> {
    if (this.#encoding === undefined) {
      this.#encoding = await loadEncodingInSlices(this.#encodingName);
      await nextTurn();
    }
    // The counter's own sticky expression is compiled on its first use (about 10 ms on a quiet
    // machine, 30 in a loaded fresh process): now, in a turn of its own, not in the first call.
    warmPiecesCounter(this.#encoding);
  }

  /** Drops this counter's hold on its encoding; the next count takes it again (see `holdEncodings`). */
  releaseEncoding(): void {
    this.#encoding = undefined;
  }

  #scale(count: number): number {
    return this.#margin === 1 ? count : Math.ceil(count * this.#margin);
  }

  #raw(text: string): number {
    if (text.length === 0) return 0;
    // A long text counted ahead in steps (see countMessageSteps); the key is the string itself.
    const counted = this.#counted?.get(text);
    return counted ?? countInSlices(text, this.#encode, this.#sliceChars);
  }

  /** Raw counts of the long texts of the message being counted in steps. */
  #counted: Map<string, number> | undefined;

  static {
    messageSteps = (counter, message) => counter.#messageSteps(message);
  }

  /**
   * {@link countMessage} in steps: the message's long texts (over {@link LONG_TEXT_CHARS}) are
   * counted slice by slice with a yield after each, then the message is counted with their
   * counts. The result is {@link countMessage}'s.
   */
  *#messageSteps(message: CompactMessage): Steps<number> {
    const counted = new Map<string, number>();
    for (const text of longTexts(message))
      if (!counted.has(text))
        counted.set(text, yield* countInSlicesSteps(text, this.#encode, this.#sliceChars));
    this.#counted = counted;
    try {
      return this.countMessage(message);
    } finally {
      this.#counted = undefined;
    }
  }

  countText(text: string): number {
    return this.#scale(this.#raw(text));
  }

  /**
   * Never below {@link #raw}: a byte-level BPE token is at least one UTF-8 byte, and counting
   * in slices adds, per hard cut, at most the tokens of the window counted again across it.
   */
  #rawBound(text: string): number {
    const length = text.length;
    if (length === 0) return 0;
    const bytes = Buffer.byteLength(text, 'utf8');
    if (length <= this.#sliceChars) return bytes;
    // Every slice but the last is at least `sliceChars - lookBack` long (see countInSlices).
    const cuts = Math.floor(length / Math.max(1, this.#sliceChars - (this.#sliceChars >> 2)));
    // The window across a cut: 2 x BOUNDARY_WINDOW UTF-16 units, 3 bytes each at most, and a
    // surrogate pair split by a cut (4 bytes, 6 once split).
    return bytes + cuts * (6 * BOUNDARY_WINDOW + 2);
  }

  /**
   * {@link countMessage} with every text's tokens bounded by its UTF-8 bytes (no tokenizing);
   * a message with images, documents or other media is counted exactly.
   */
  boundMessage(message: CompactMessage): number {
    const parts = mediaParts(message.raw);
    if (parts.length > 0) return this.countMessage(message);
    const o = OPENAI_MESSAGE_OVERHEAD;
    let total = o.perMessage + this.#rawBound(message.role);
    if (message.kind === 'other') return this.#scale(total + this.#rawBound(JSON.stringify(message.raw)));
    total += this.#rawBound(message.text);
    const raw = message.raw as Record<string, unknown> | null;
    if (raw && typeof raw === 'object' && typeof raw.name === 'string' && message.role !== 'tool') {
      total += o.perName + this.#rawBound(raw.name);
    }
    for (const call of message.toolCalls) {
      total += o.perToolCall + this.#rawBound(call.name) + this.#rawBound(call.arguments);
    }
    for (const result of message.toolResults) total += o.perMessage + this.#rawBound(result.output);
    return this.#scale(total);
  }

  /**
   * Text, role and per-message overhead (times the margin), plus the message's images,
   * documents and encrypted reasoning (see `mediaTokens`). Media payloads inside text made
   * from the message's structure (a screenshot object in a tool output, an item kept as JSON)
   * count as the media, not as base64 text; a `data:` URL in text the caller wrote is text,
   * as the provider sees it.
   */
  countMessage(message: CompactMessage): number {
    const o = OPENAI_MESSAGE_OVERHEAD;
    const parts = mediaParts(message.raw);
    const text = (value: string) => (parts.length > 0 ? elideMedia(value, parts) : value);
    let total = o.perMessage + this.#raw(message.role);
    if (message.kind === 'other') {
      total += this.#raw(text(JSON.stringify(message.raw)));
      return this.#scale(total) + this.#media(message, parts);
    }
    total += this.#raw(message.text);
    const raw = message.raw as Record<string, unknown> | null;
    if (raw && typeof raw === 'object' && typeof raw.name === 'string' && message.role !== 'tool') {
      total += o.perName + this.#raw(raw.name);
    }
    for (const call of message.toolCalls) {
      total += o.perToolCall + this.#raw(call.name) + this.#raw(call.arguments);
    }
    for (const result of message.toolResults) total += o.perMessage + this.#raw(text(result.output));
    return this.#scale(total) + this.#media(message, parts);
  }

  #media(message: CompactMessage, parts: readonly MediaPart[]): number {
    if (parts.length === 0) return 0;
    const rule =
      this.#imageRule ?? (message.format === 'anthropic' ? ANTHROPIC_IMAGE_RULE : OPENAI_TILE_RULE);
    return mediaTokens(parts, rule, (text) => this.countText(text));
  }

  countTools(tools: readonly unknown[]): number {
    if (tools.length === 0) return 0;
    const { text, unknown } = formatToolSchemas(tools);
    let total = this.#raw(text) + OPENAI_MESSAGE_OVERHEAD.toolsWrapper;
    for (const tool of unknown) total += this.#raw(JSON.stringify(tool));
    return this.#scale(total);
  }
}

/** A message text longer than this is counted across turns of the loop (see {@link countMessageSteps}). */
export const LONG_TEXT_CHARS = 65_536;

/** The texts of `message` {@link BpeTokenCounter.countMessage} tokenizes that are long. */
function longTexts(message: CompactMessage): string[] {
  const texts = [message.text];
  for (const call of message.toolCalls) texts.push(call.arguments);
  for (const result of message.toolResults) texts.push(result.output);
  return texts.filter((text) => text.length > LONG_TEXT_CHARS);
}

/** Whether `message` has a text over {@link LONG_TEXT_CHARS} (no allocation: asked of every message counted ahead). */
export function hasLongText(message: Pick<CompactMessage, 'text' | 'toolCalls' | 'toolResults'>): boolean {
  if (message.text.length > LONG_TEXT_CHARS) return true;
  for (const call of message.toolCalls) if (call.arguments.length > LONG_TEXT_CHARS) return true;
  for (const result of message.toolResults) if (result.output.length > LONG_TEXT_CHARS) return true;
  return false;
}

/**
 * `counter.countMessage(message)` as steps that yield between slices of its long texts (run
 * them with `runStepsYielding`), or undefined when there is nothing long to slice or the
 * counter is not this package's tokenizer: a 10 MB tool output is counted across turns of
 * the event loop instead of in one block. Internal: not exported by the counting entry.
 */
export function countMessageSteps(counter: TokenCounter, message: CompactMessage): Steps<number> | undefined {
  if (!(counter instanceof BpeTokenCounter) || message.kind === 'other') return undefined;
  // Texts with media in them are counted elided (a different string): left to countMessage.
  if (!hasLongText(message) || mediaParts(message.raw).length > 0) return undefined;
  return messageSteps(counter, message);
}

const counters = new Map<string, BpeTokenCounter>();
let holders = 0;

/**
 * Marks one more user of the shared counters' encodings (a manager, for its life). The
 * returned function ends that hold, once; when the last hold ends, the shared counters drop
 * their encodings so the collector can take them (about 20 MB each): a process that shut its
 * managers down goes back to the heap it had before it counted. A count made later takes the
 * encoding again (reused if not yet collected, built again otherwise). The process's other
 * shared tables (process-caches.ts) are dropped with them.
 */
export function holdEncodings(): () => void {
  holders++;
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    holders--;
    if (holders > 0) return;
    for (const counter of counters.values()) counter.releaseEncoding();
    releaseEncodings();
    releaseProcessCaches();
  };
}

/**
 * The token counter for a model (shared per encoding, margin and image rule, so caches
 * warm once). Images are counted with the model's provider formula (`imageRuleFor`); for a
 * model the table does not know, with the formula of the message format's provider.
 *
 * @example
 * ```ts
 * const counter = tokenCounterFor('gpt-4o');
 * counter.countText('hello'); // 1
 * ```
 */
export function tokenCounterFor(model: string, options: { margin?: number } = {}): TokenCounter {
  const info = modelInfo(model);
  const margin = options.margin ?? (info.exact ? 1 : DEFAULT_ESTIMATE_MARGIN);
  // An unknown model's images follow the message format (Anthropic's rule for Anthropic messages).
  const imageRule = info.known ? imageRuleFor(model) : undefined;
  const key = `${info.encoding}:${margin}:${JSON.stringify(imageRule ?? 'by-format')}`;
  let counter = counters.get(key);
  if (!counter) {
    counter = new BpeTokenCounter({
      encoding: info.encoding,
      margin,
      ...(imageRule === undefined ? {} : { imageRule }),
    });
    counters.set(key, counter);
  }
  return counter;
}
