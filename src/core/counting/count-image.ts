/**
 * Image token counts by each provider's published formula, from the dimensions in the
 * image's header (read with `image-size`, which needs only the first bytes).
 */
import { imageSize } from 'image-size';
import type { ImageDetail } from '../messages/formats/media-parts.js';
import { normalizeModelName } from './model-table.js';

/** Width and height in pixels. */
export interface ImageDimensions {
  width: number;
  height: number;
}

/**
 * How a provider turns an image into input tokens.
 *
 * - `tiles`: OpenAI's tile rule (gpt-4o, gpt-4.1, gpt-5, o-series): `low` detail costs `base`;
 *   otherwise the image is fitted into 2048 x 2048, its shortest side scaled to 768, and it
 *   costs `base + perTile x` the 512 x 512 tiles that cover it.
 * - `patches`: OpenAI's patch rule (gpt-4.1-mini, gpt-4.1-nano, gpt-5-mini, gpt-5-nano,
 *   o4-mini): 32 x 32 patches, at most 1,536 (scaled down to fit), times `multiplier`.
 * - `anthropic`: `width x height / 750` after scaling down to a 1,568-pixel long edge and at
 *   most 1,600 tokens (about 1.15 megapixels).
 * - `gemini`: 258 tokens when both sides are at most 384 pixels, else 258 per 768 x 768 tile.
 */
export type ImageRule =
  | { kind: 'tiles'; base: number; perTile: number }
  | { kind: 'patches'; multiplier: number }
  | { kind: 'anthropic' }
  | { kind: 'gemini' };

/** OpenAI's standard tile costs (gpt-4o, gpt-4.1, gpt-4.5). */
export const OPENAI_TILE_RULE: ImageRule = Object.freeze({ kind: 'tiles', base: 85, perTile: 170 });

/** Anthropic's rule. */
export const ANTHROPIC_IMAGE_RULE: ImageRule = Object.freeze({ kind: 'anthropic' });

/** Gemini's rule. */
export const GEMINI_IMAGE_RULE: ImageRule = Object.freeze({ kind: 'gemini' });

/**
 * Dimensions assumed for an image sent by URL or file id only (nothing to read a header
 * from), by rule: the shape that costs the most. Under OpenAI's tile rule that is 2048 x 768
 * (8 tiles: 1,445 tokens for gpt-4o); under its patch rule any image of 1,536 patches or
 * more; under Anthropic's, 1568 x 1568 (capped at 1,600 tokens); under Gemini's, 1536 x 1536
 * (4 tiles, 1,032 tokens). Estimates err towards compacting early; calibration from reported
 * usage then corrects them.
 */
export const DEFAULT_IMAGE_DIMENSIONS: Readonly<Record<ImageRule['kind'], Readonly<ImageDimensions>>> =
  Object.freeze({
    tiles: Object.freeze({ width: 2048, height: 768 }),
    patches: Object.freeze({ width: 2048, height: 2048 }),
    anthropic: Object.freeze({ width: 1568, height: 1568 }),
    gemini: Object.freeze({ width: 1536, height: 1536 }),
  });

/** The longest edge Anthropic keeps before scaling down. */
const ANTHROPIC_MAX_EDGE = 1568;
/** Anthropic's per-image cap in tokens (`width x height / 750`, about 1.15-1.2 MP). */
const ANTHROPIC_MAX_TOKENS = 1600;
const GEMINI_TILE_TOKENS = 258;

/** OpenAI image rules by model family (OpenAI's vision guide, "Calculating costs"). */
const OPENAI_RULES: [RegExp, ImageRule][] = [
  [/^gpt-5-(mini|codex-mini)/, { kind: 'patches', multiplier: 1.62 }],
  [/^gpt-5-nano/, { kind: 'patches', multiplier: 2.46 }],
  [/^gpt-5/, { kind: 'tiles', base: 70, perTile: 140 }],
  [/^gpt-4\.1-mini/, { kind: 'patches', multiplier: 1.62 }],
  [/^gpt-4\.1-nano/, { kind: 'patches', multiplier: 2.46 }],
  [/^o4-mini/, { kind: 'patches', multiplier: 1.72 }],
  [/^gpt-4o-mini/, { kind: 'tiles', base: 2833, perTile: 5667 }],
  [/^(o1|o3)/, { kind: 'tiles', base: 75, perTile: 150 }],
  [/^computer-use/, { kind: 'tiles', base: 65, perTile: 129 }],
];

/**
 * The image rule of a model: OpenAI's rules by family, Anthropic's for Claude, Gemini's for
 * Gemini and Gemma, and OpenAI's standard tile rule for everything else (open models are
 * mostly served through OpenAI-compatible APIs).
 */
export function imageRuleFor(model: string): ImageRule {
  const name = normalizeModelName(model);
  if (name.startsWith('claude')) return ANTHROPIC_IMAGE_RULE;
  if (name.startsWith('gemini') || name.startsWith('gemma')) return GEMINI_IMAGE_RULE;
  return OPENAI_RULES.find(([pattern]) => pattern.test(name))?.[1] ?? OPENAI_TILE_RULE;
}

/** Base64 characters decoded first to read a header (PNG, GIF, WebP, most JPEGs). */
const FIRST_HEADER_CHARS = 4096;
/** Base64 characters decoded next (covers JPEG EXIF blocks in practice), before the whole image. */
const HEADER_CHARS = 96 * 1024;

/** Decodes base64 or a `data:` URL to bytes (`limit` characters of the payload at most). */
export function decodeInline(data: string, limit = Number.POSITIVE_INFINITY): Buffer {
  const comma = data.startsWith('data:') ? data.indexOf(',') : -1;
  const start = comma + 1;
  let end = Math.min(data.length, start + limit);
  end -= (end - start) % 4;
  return Buffer.from(data.slice(start, end), 'base64');
}

/**
 * The dimensions of an inline image (base64 or a `data:` URL) from its header, or
 * `undefined` when the bytes are not an image `image-size` reads. EXIF rotations by 90
 * degrees swap width and height.
 */
export function imageDimensions(data: string): ImageDimensions | undefined {
  const read = (bytes: Buffer) => {
    try {
      const size = imageSize(bytes);
      if (!(size.width > 0 && size.height > 0)) return undefined;
      const rotated = size.orientation !== undefined && size.orientation >= 5;
      return rotated
        ? { width: size.height, height: size.width }
        : { width: size.width, height: size.height };
    } catch {
      return undefined;
    }
  };
  // Most headers sit in the first bytes; JPEGs with large EXIF blocks need more.
  return (
    read(decodeInline(data, FIRST_HEADER_CHARS)) ??
    (data.length > FIRST_HEADER_CHARS ? read(decodeInline(data, HEADER_CHARS)) : undefined) ??
    (data.length > HEADER_CHARS ? read(decodeInline(data)) : undefined)
  );
}

function tileTokens(
  rule: { base: number; perTile: number },
  size: ImageDimensions,
  detail: ImageDetail,
): number {
  if (detail === 'low') return rule.base;
  let { width, height } = size;
  const fit = Math.min(1, 2048 / Math.max(width, height));
  width *= fit;
  height *= fit;
  const shortest = Math.min(width, height);
  if (shortest > 768) {
    width *= 768 / shortest;
    height *= 768 / shortest;
  }
  return rule.base + rule.perTile * Math.ceil(width / 512) * Math.ceil(height / 512);
}

function patchTokens(multiplier: number, size: ImageDimensions): number {
  const maxPatches = 1536;
  let { width, height } = size;
  const patches = Math.ceil(width / 32) * Math.ceil(height / 32);
  if (patches > maxPatches) {
    let shrink = Math.sqrt((maxPatches * 32 * 32) / (width * height));
    shrink *= Math.min(
      Math.floor((width * shrink) / 32) / ((width * shrink) / 32),
      Math.floor((height * shrink) / 32) / ((height * shrink) / 32),
    );
    width *= shrink;
    height *= shrink;
  }
  const capped = Math.min(maxPatches, Math.ceil(width / 32) * Math.ceil(height / 32));
  return Math.ceil(capped * multiplier);
}

function anthropicTokens(size: ImageDimensions): number {
  let { width, height } = size;
  const edge = Math.min(1, ANTHROPIC_MAX_EDGE / Math.max(width, height));
  width *= edge;
  height *= edge;
  return Math.min(ANTHROPIC_MAX_TOKENS, Math.ceil((width * height) / 750));
}

function geminiTokens(size: ImageDimensions): number {
  if (size.width <= 384 && size.height <= 384) return GEMINI_TILE_TOKENS;
  return GEMINI_TILE_TOKENS * Math.ceil(size.width / 768) * Math.ceil(size.height / 768);
}

/**
 * Input tokens of one image under `rule`. Without dimensions (an image sent by URL or file
 * id) the rule's {@link DEFAULT_IMAGE_DIMENSIONS} are assumed. `detail` matters to OpenAI's tile rule
 * only (`auto` counts as `high`, the safe side).
 *
 * @example
 * ```ts
 * imageTokens(OPENAI_TILE_RULE, { width: 1280, height: 800 }, 'high'); // 1105
 * imageTokens(ANTHROPIC_IMAGE_RULE, { width: 1280, height: 800 }); // 1366
 * ```
 */
export function imageTokens(
  rule: ImageRule,
  size: ImageDimensions | undefined,
  detail: ImageDetail = 'auto',
): number {
  const dims = size ?? DEFAULT_IMAGE_DIMENSIONS[rule.kind];
  switch (rule.kind) {
    case 'tiles':
      return tileTokens(rule, dims, detail);
    case 'patches':
      return patchTokens(rule.multiplier, dims);
    case 'anthropic':
      return anthropicTokens(dims);
    case 'gemini':
      return geminiTokens(dims);
  }
}
