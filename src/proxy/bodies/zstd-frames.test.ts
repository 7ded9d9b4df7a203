/**
 * The guards around fzstd (zstd-frames.ts), run in this thread with the real fzstd: frames found
 * from their headers (several, with skippable ones between), a window or declared size over the
 * limit refused before fzstd is handed the frame, output stopped past the limit, and data that
 * is not zstd named.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Decompress } from 'fzstd';
import { describe, expect, it } from 'vitest';
import { rawBlocks, rleBlocks, zstdFrame } from '../../../test/support/zstd-frame.js';
import { decodeZstdFrames, zstdFrames } from './zstd-frames.js';

/** fzstd's decoder, counting the frames it is handed. */
class CountedDecompress extends Decompress {
  static made = 0;
  constructor(ondata: (chunk: Uint8Array, final?: boolean) => unknown) {
    super(ondata);
    CountedDecompress.made++;
  }
}

const text = (outcome: ReturnType<typeof decodeZstdFrames>) =>
  'bytes' in outcome ? Buffer.from(outcome.bytes).toString('latin1') : outcome;

describe('zstd frames decoded by fzstd behind the guards', () => {
  it('several frames, skippable ones between, decode to their concatenation', () => {
    const body = Buffer.concat([
      zstdFrame(rawBlocks('hello ')),
      Buffer.from([0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 9, 9]),
      zstdFrame([...rawBlocks('world'), ...rleBlocks(33, 3)]),
    ]);
    expect(zstdFrames(body)).toHaveLength(2);
    expect(text(decodeZstdFrames(body, 1000, Decompress))).toBe('hello world!!!');
    const made = readFileSync(
      join(import.meta.dirname, '../../../test/fixtures/proxy/chat-12-notes.json.zst'),
    );
    const decoded = decodeZstdFrames(made, 1 << 20, Decompress);
    expect('bytes' in decoded && decoded.bytes.length).toBe(58_459);
  });

  it('a window or a declared content size over the limit: tooLarge, fzstd never handed the frame', () => {
    CountedDecompress.made = 0;
    // 1.875 GiB window (0xa7); 16 MiB window (0x70) past an 8 MiB floor and a 1 MiB limit.
    expect(decodeZstdFrames(zstdFrame(rawBlocks('{}'), 0xa7), 1 << 20, CountedDecompress)).toEqual({
      tooLarge: true,
    });
    expect(decodeZstdFrames(zstdFrame(rawBlocks('{}'), 0x70), 1 << 20, CountedDecompress)).toEqual({
      tooLarge: true,
    });
    // Single segment, a 4-byte content size of 2 MiB, one raw block of 2 bytes.
    const declared = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0, 0, 0x20, 0, 0x11, 0, 0, 0x7b, 0x7d]);
    expect(decodeZstdFrames(declared, 1 << 20, CountedDecompress)).toEqual({ tooLarge: true });
    expect(CountedDecompress.made).toBe(0);
  });

  it('output past the limit stops the decoder: tooLarge', () => {
    const bomb = zstdFrame(rleBlocks(32, 64 << 20));
    expect(decodeZstdFrames(bomb, 1 << 20, Decompress)).toEqual({ tooLarge: true });
    expect(text(decodeZstdFrames(zstdFrame(rleBlocks(32, 1 << 20)), 1 << 20, Decompress))).toHaveLength(
      1 << 20,
    );
  });

  it('not zstd, truncated, a dictionary, a reserved block type or bit, a wrong declared size: invalid', () => {
    const frame = zstdFrame(rawBlocks('{"a":1}'));
    const cases = [
      Buffer.from('not zstd at all'),
      frame.subarray(0, frame.length - 2),
      Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x01, 0x50, 7, 1, 0, 0, 0x7b]),
      Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50, 0x0f, 0, 0, 0]),
      Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x08, 0x50, 0x11, 0, 0, 0x7b, 0x7d]),
      // Single segment, a 1-byte content size of 3, one raw block of 2 bytes.
      Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x20, 3, 0x11, 0, 0, 0x7b, 0x7d]),
    ];
    for (const body of cases) expect(decodeZstdFrames(body, 1 << 20, Decompress)).toHaveProperty('invalid');
  });
});
