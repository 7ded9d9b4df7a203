/**
 * A compressed request body (`Content-Encoding: gzip`, `deflate`, `br`, `zstd`) decoded so that
 * the proxy can compact it. Decoded off the event loop (zlib's thread pool; zstd on a Node whose
 * zlib has none, before 22.15, by fzstd in a worker thread, see zstd-worker.ts), each coding's
 * output capped at the proxy's body limit as it is produced: a few kilobytes that would inflate
 * to gigabytes (a zip bomb) stop at the limit, never held whole. zstd with neither is a 415.
 */
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { fzstdDecompress, hasFzstd } from './zstd-worker.js';

type Decoder = (bytes: Buffer, options: zlib.ZlibOptions) => Promise<Buffer>;

/** Node 22.15's zstd decoder, when this Node has one (Node 20's zlib has none). */
const zstd = (zlib as unknown as { zstdDecompress?: (b: Buffer, o: object, cb: () => void) => void })
  .zstdDecompress;

/** The decoders by coding name (RFC 9110 8.4.1; `x-gzip` is `gzip`), zstd's where there is one. */
const DECODERS: ReadonlyMap<string, Decoder> = new Map<string, Decoder>([
  ['gzip', promisify(zlib.gunzip)],
  ['x-gzip', promisify(zlib.gunzip)],
  // HTTP's `deflate` is the zlib format; some clients send raw deflate: taken as well.
  ['deflate', inflateEither],
  ['br', promisify(zlib.brotliDecompress) as Decoder],
  ['zstd', zstd === undefined ? fzstdDecompress : (promisify(zstd) as unknown as Decoder)],
]);

/** Whether this process can decode `coding` (zstd: with zlib's decoder or fzstd). */
function canDecode(coding: string): boolean {
  return DECODERS.has(coding) && (coding !== 'zstd' || zstd !== undefined || hasFzstd());
}

async function inflateEither(bytes: Buffer, options: zlib.ZlibOptions): Promise<Buffer> {
  // A zlib stream starts with a header whose first 16 bits are a multiple of 31 (RFC 1950).
  const zlibHeader = bytes.length >= 2 && (bytes[0]! & 0x0f) === 8 && bytes.readUInt16BE(0) % 31 === 0;
  return await promisify(zlibHeader ? zlib.inflate : zlib.inflateRaw)(bytes, options);
}

/** What {@link decodeBody} made of a body. */
export type DecodedBody =
  | { bytes: Buffer }
  /** A coding the proxy cannot decode: the body is forwarded as sent. */
  | { unknown: string }
  /** A coding clients send that this process cannot decode (`zstd` before Node 22.15 without fzstd): refused, 415. */
  | { unsupported: string }
  /** Decoded, it would be over the limit. */
  | { tooLarge: true }
  /** Not valid in the coding it names. */
  | { invalid: string };

/** The codings of a `Content-Encoding` value, in the order they were applied; none for `identity`. */
export function contentCodings(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** The codings {@link decodeBody} can undo here, for an `Accept-Encoding` answer. */
export function decodableCodings(): string[] {
  return [...DECODERS.keys()].filter((name) => name !== 'x-gzip' && canDecode(name));
}

/**
 * The first of `codings` that clients send (Codex compresses with zstd) but this process cannot
 * decode: zstd on a Node without it in zlib when the optional fzstd is not installed.
 */
export function unsupportedCoding(codings: readonly string[]): string | undefined {
  return codings.find((coding) => DECODERS.has(coding) && !canDecode(coding));
}

/** Whether {@link decodeBody} can undo every one of `codings` (none: nothing to undo). */
export function decodable(codings: readonly string[]): boolean {
  return codings.every(canDecode);
}

/** `bytes` with `codings` undone (the last applied first), none of them past `maxBytes`. */
export async function decodeBody(
  bytes: Buffer,
  codings: readonly string[],
  maxBytes: number,
): Promise<DecodedBody> {
  const unsupported = unsupportedCoding(codings);
  if (unsupported !== undefined) return { unsupported };
  const unknown = codings.find((coding) => !DECODERS.has(coding));
  if (unknown !== undefined) return { unknown };
  let out = bytes;
  for (const coding of [...codings].reverse()) {
    try {
      out = await DECODERS.get(coding)!(out, { maxOutputLength: maxBytes });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return { tooLarge: true };
      return { invalid: coding };
    }
  }
  return { bytes: out };
}
