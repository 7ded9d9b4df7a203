/**
 * A compressed request body (`Content-Encoding: gzip`, `deflate`, `br`; `zstd` where Node's zlib
 * has it, from Node 22.15, else a 415 naming it) decoded so that the proxy can compact it. Decoded off the event loop
 * (zlib's thread pool), each coding's output capped at the proxy's body limit as it is produced:
 * a few kilobytes that would inflate to gigabytes (a zip bomb) stop at the limit, never held whole.
 */
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';

type Decoder = (bytes: Buffer, options: zlib.ZlibOptions) => Promise<Buffer>;

/** Node 22.15's zstd decoder, when this Node has one (Node 20's zlib has none). */
const zstd = (zlib as unknown as { zstdDecompress?: (b: Buffer, o: object, cb: () => void) => void })
  .zstdDecompress;

/** The decoders by coding name (RFC 9110 8.4.1; `x-gzip` is `gzip`). */
const DECODERS: ReadonlyMap<string, Decoder> = new Map<string, Decoder>([
  ['gzip', promisify(zlib.gunzip)],
  ['x-gzip', promisify(zlib.gunzip)],
  // HTTP's `deflate` is the zlib format; some clients send raw deflate: taken as well.
  ['deflate', inflateEither],
  ['br', promisify(zlib.brotliDecompress) as Decoder],
  ...(zstd === undefined ? [] : [['zstd', promisify(zstd) as unknown as Decoder] as const]),
]);

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
  /** A coding clients send that this Node cannot decode (`zstd` before 22.15): refused, 415. */
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

/**
 * Codings clients send (Codex compresses with zstd) that this Node cannot decode. No pure-JS
 * decoder is taken instead: fzstd 0.1.1 (Dec 2024) decodes on the event loop and allocates the
 * window a frame header declares (1.9 GB from 20 bytes), before any output cap could stop it.
 */
export const UNSUPPORTED_CODINGS: readonly string[] = zstd === undefined ? ['zstd'] : [];

/** The codings {@link decodeBody} can undo, for an `Accept-Encoding` answer. */
export const DECODABLE_CODINGS: readonly string[] = [...DECODERS.keys()].filter((name) => name !== 'x-gzip');

/** The first of `codings` this Node cannot decode though clients send it (see {@link UNSUPPORTED_CODINGS}). */
export function unsupportedCoding(codings: readonly string[]): string | undefined {
  return codings.find((coding) => UNSUPPORTED_CODINGS.includes(coding));
}

/** Whether {@link decodeBody} can undo every one of `codings` (none: nothing to undo). */
export function decodable(codings: readonly string[]): boolean {
  return codings.every((coding) => DECODERS.has(coding));
}

/** `bytes` with `codings` undone (the last applied first), none of them past `maxBytes`. */
export async function decodeBody(
  bytes: Buffer,
  codings: readonly string[],
  maxBytes: number,
): Promise<DecodedBody> {
  const unsupported = unsupportedCoding(codings);
  if (unsupported !== undefined) return { unsupported };
  if (!decodable(codings)) return { unknown: codings.find((coding) => !DECODERS.has(coding))! };
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
