/**
 * A zstd frame (RFC 8878) written by hand from raw and RLE blocks: a body whose frames a test
 * shapes exactly (a bomb of RLE blocks, a declared window) without a compressor. Any zstd
 * decoder reads it (checked with the `zstd` tool 1.5.4: `zstd -t`).
 */

/** A raw block (its bytes as they are) or an RLE block (`size` copies of the byte `rle`). */
export type ZstdBlock = { raw: Uint8Array } | { rle: number; size: number };

/** The largest block (128 KiB), when the window is at least that. */
export const ZSTD_BLOCK_MAX = 128 * 1024;

/**
 * One frame of `blocks`, without content size or checksum, whose window descriptor byte is
 * `windowDescriptor` (0x50: 1 MiB; 0xa7: 1.875 GiB).
 */
export function zstdFrame(blocks: readonly ZstdBlock[], windowDescriptor = 0x50): Buffer {
  const parts: Uint8Array[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, windowDescriptor])];
  blocks.forEach((block, index) => {
    const raw = 'raw' in block;
    const size = raw ? block.raw.length : block.size;
    const header = size * 8 + (raw ? 0 : 2) + (index === blocks.length - 1 ? 1 : 0);
    parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff]));
    parts.push(raw ? block.raw : Buffer.from([block.rle]));
  });
  return Buffer.concat(parts);
}

/** `text` in raw blocks of at most 128 KiB. */
export function rawBlocks(text: string | Buffer): ZstdBlock[] {
  const bytes = Buffer.from(text);
  const blocks: ZstdBlock[] = [];
  for (let at = 0; at < bytes.length; at += ZSTD_BLOCK_MAX)
    blocks.push({ raw: bytes.subarray(at, at + ZSTD_BLOCK_MAX) });
  return blocks;
}

/** `size` bytes of `byte` in RLE blocks of at most 128 KiB. */
export function rleBlocks(byte: number, size: number): ZstdBlock[] {
  const blocks: ZstdBlock[] = [];
  for (let left = size; left > 0; left -= ZSTD_BLOCK_MAX)
    blocks.push({ rle: byte, size: Math.min(left, ZSTD_BLOCK_MAX) });
  return blocks;
}
