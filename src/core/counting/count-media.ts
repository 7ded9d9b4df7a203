/**
 * Token estimates of the non-text parts of a message: images (each provider's formula),
 * documents and encrypted reasoning (documented estimates that calibration from reported
 * usage corrects).
 */
import type { MediaPart } from '../messages/formats/media-parts.js';
import { decodeInline, type ImageRule, imageDimensions, imageTokens } from './count-image.js';

/**
 * Tokens per page of a PDF: the top of Anthropic's documented 1,500-3,000 per page (each
 * page is sent as its text plus an image of the page; OpenAI does the same), so estimates
 * err towards compacting early.
 * @default 3000
 */
export const PDF_PAGE_TOKENS = 3000;

/**
 * Pages assumed for a document whose page count cannot be read (sent by URL or file id, or
 * a PDF whose page objects are compressed).
 * @default 5
 */
export const DEFAULT_DOCUMENT_PAGES = 5;

/**
 * Base64 characters of encrypted reasoning per token: 4 characters carry 3 bytes, the
 * ciphertext is about as long as the reasoning text, and text runs about 4 bytes per token,
 * so one token per 16/3 characters. Applies to Responses `reasoning.encrypted_content` and
 * Anthropic `redacted_thinking.data`. A thinking block's `signature` is not counted (it is
 * verification data, not model input); its `thinking` text is.
 */
export const ENCRYPTED_CHARS_PER_TOKEN = 16 / 3;

/**
 * Tokens of a file sent by id (`file.file_id`): its size is unknown here, so it counts as one
 * PDF page, and the preflight reports the estimate in a `compact.warning` (`media_estimate`);
 * reported usage corrects it (calibration).
 * @default 3000
 */
export const FILE_REFERENCE_TOKENS = PDF_PAGE_TOKENS;

/**
 * Input tokens per second of audio: OpenAI bills user audio at one token per 100 ms.
 * @default 10
 */
export const AUDIO_TOKENS_PER_SECOND = 10;

/** Bytes per second assumed for compressed audio whose duration is not read (128 kbit/s). */
const COMPRESSED_AUDIO_BYTES_PER_SECOND = 16_000;

/**
 * Seconds of a WAV file from its header (`byteRate` and the `data` chunk, capped by the file's
 * `totalBytes`), else undefined.
 */
export function wavSeconds(bytes: Uint8Array, totalBytes = bytes.length): number | undefined {
  if (bytes.length < 44) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (tag(0) !== 'RIFF' || tag(8) !== 'WAVE') return undefined;
  let byteRate = 0;
  // Walk the chunks (at most 64: a header is short) for fmt and data.
  for (let at = 12, chunks = 0; at + 8 <= bytes.length && chunks < 64; chunks++) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === 'fmt ' && at + 16 <= bytes.length) byteRate = view.getUint32(at + 16, true);
    if (tag(at) === 'data') return byteRate > 0 ? Math.min(size, totalBytes - at - 8) / byteRate : undefined;
    at += 8 + size + (size % 2);
  }
  return undefined;
}

/** Tokens of an audio part: its duration (WAV header, else 128 kbit/s) at {@link AUDIO_TOKENS_PER_SECOND}. */
export function audioTokens(part: { data?: string; format?: string }): number {
  if (part.data === undefined) return 0;
  const comma = part.data.startsWith('data:') ? part.data.indexOf(',') + 1 : 0;
  const totalBytes = Math.floor(((part.data.length - comma) * 3) / 4);
  const seconds =
    wavSeconds(decodeInline(part.data, 4096), totalBytes) ?? totalBytes / COMPRESSED_AUDIO_BYTES_PER_SECOND;
  return Math.max(1, Math.ceil(seconds * AUDIO_TOKENS_PER_SECOND));
}

/** Bytes of a PDF beyond which page markers are not searched (size decides instead). */
const PDF_SCAN_BYTES = 64 * 1024 * 1024;
/** Bytes per page assumed when a PDF's page objects cannot be found. */
const PDF_BYTES_PER_PAGE = 100 * 1024;

/**
 * Pages of a PDF: the `/Type /Page` objects when they are in the clear, else the largest
 * `/Count` of a page tree, else one page per 100 KB.
 */
export function pdfPageCount(bytes: Uint8Array): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, PDF_SCAN_BYTES)).toString(
    'latin1',
  );
  const pages = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  if (pages > 0) return pages;
  let count = 0;
  for (const match of text.matchAll(/\/Count\s+(\d{1,6})/g)) count = Math.max(count, Number(match[1]));
  return count > 0 ? count : Math.max(1, Math.ceil(bytes.length / PDF_BYTES_PER_PAGE));
}

function mediaTypeOf(part: { data?: string; mediaType?: string }): string | undefined {
  if (part.mediaType !== undefined) return part.mediaType;
  const match = part.data === undefined ? null : /^data:([\w.+-]+\/[\w.+-]+)/.exec(part.data);
  return match?.[1];
}

function documentTokens(part: MediaPart & { kind: 'document' }, countText: (text: string) => number): number {
  if (part.text !== undefined) return countText(part.text);
  if (part.fileId !== undefined) return FILE_REFERENCE_TOKENS;
  if (part.data === undefined) return DEFAULT_DOCUMENT_PAGES * PDF_PAGE_TOKENS;
  const type = mediaTypeOf(part);
  const bytes = decodeInline(part.data);
  if (type !== undefined && (type.startsWith('text/') || type === 'application/json'))
    return countText(bytes.toString('utf8'));
  return pdfPageCount(bytes) * PDF_PAGE_TOKENS;
}

/**
 * Input tokens of a message's media parts: images by `rule` from their header dimensions,
 * documents by page (text sources counted with `countText`, a file by id as
 * {@link FILE_REFERENCE_TOKENS}), audio by duration, encrypted reasoning by length.
 */
export function mediaTokens(
  parts: readonly MediaPart[],
  rule: ImageRule,
  countText: (text: string) => number,
): number {
  let total = 0;
  for (const part of parts) {
    if (part.kind === 'image') {
      const size = part.data === undefined ? undefined : imageDimensions(part.data);
      total += imageTokens(rule, size, part.detail);
    } else if (part.kind === 'document') {
      total += documentTokens(part, countText);
    } else if (part.kind === 'audio') {
      total += audioTokens(part);
    } else {
      total += Math.ceil(part.data.length / ENCRYPTED_CHARS_PER_TOKEN);
    }
  }
  return total;
}
