/**
 * A zstd body (RFC 8878) decoded by fzstd with guards fzstd lacks: its frames are found from
 * their headers and block headers first, and a frame whose window (the memory a decoder sets
 * aside before any output) or declared content size is over the limit is refused before fzstd
 * sees it; fzstd would allocate the window a header declares, 1.9 GB from 20 bytes. The output
 * is counted block by block (128 KiB at most each) and stops past the limit.
 *
 * These functions run in the decoding worker (zstd-worker.ts sends their source as text): they
 * use nothing outside themselves but their arguments and the language's globals.
 */

/** A zstd frame of a body: where it is, its window and its declared content size, if any. */
export interface ZstdFrame {
  start: number;
  end: number;
  window: number;
  contentSize: number | undefined;
}

/** What {@link decodeZstdFrames} made of a body. */
export type ZstdOutcome = { bytes: Uint8Array } | { tooLarge: true } | { invalid: string };

/** fzstd's streaming decoder: `push` decodes, `ondata` gets each block's output. */
export type ZstdStreamDecoder = new (
  ondata: (chunk: Uint8Array, final?: boolean) => unknown,
) => { push(chunk: Uint8Array, final?: boolean): unknown };

/**
 * The zstd frames of `bytes` in order (skippable frames left out), read from the frame and block
 * headers alone (RFC 8878 3.1), or why `bytes` is not zstd. A frame with a dictionary is
 * refused (a request body names none). One pass over the block headers, no output.
 */
export function zstdFrames(bytes: Uint8Array): ZstdFrame[] | string {
  const le = (at: number, size: number) => {
    let value = 0;
    for (let i = 0; i < size; i++) value += bytes[at + i]! * 2 ** (8 * i);
    return value;
  };
  const frames: ZstdFrame[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 8 > bytes.length) return 'a truncated frame';
    const magic = le(at, 4);
    if (magic >= 0x184d2a50 && magic <= 0x184d2a5f) {
      at += 8 + le(at + 4, 4);
      if (at > bytes.length) return 'a truncated skippable frame';
      continue;
    }
    if (magic !== 0xfd2fb528) return 'no zstd frame';
    const descriptor = bytes[at + 4]!;
    if ((descriptor & 8) !== 0) return 'a reserved bit set';
    const single = (descriptor >> 5) & 1;
    const sizeFlag = descriptor >> 6;
    const dictionarySize = [0, 1, 2, 4][descriptor & 3]!;
    const contentSizeSize = sizeFlag === 0 ? single : 1 << sizeFlag;
    let pos = at + 5 + (single ? 0 : 1);
    if (pos + dictionarySize + contentSizeSize > bytes.length) return 'a truncated frame header';
    if (le(pos, dictionarySize) !== 0) return 'a dictionary';
    pos += dictionarySize;
    const contentSize =
      contentSizeSize === 0 ? undefined : le(pos, contentSizeSize) + (contentSizeSize === 2 ? 256 : 0);
    pos += contentSizeSize;
    const exponent = bytes[at + 5]! >> 3;
    const base = 2 ** (10 + exponent);
    const window = single ? contentSize! : base + (base / 8) * (bytes[at + 5]! & 7);
    for (let last = 0; last === 0; ) {
      if (pos + 3 > bytes.length) return 'a truncated block';
      const header = le(pos, 3);
      const type = (header >> 1) & 3;
      if (type === 3) return 'a reserved block type';
      last = header & 1;
      pos += 3 + (type === 1 ? 1 : header >>> 3);
    }
    pos += (descriptor & 4) === 0 ? 0 : 4;
    if (pos > bytes.length) return 'a truncated frame';
    frames.push({ start: at, end: pos, window, contentSize });
    at = pos;
  }
  return frames;
}

/**
 * `bytes` decoded, frame by frame, by `Decoder` (fzstd's `Decompress`): over `maxBytes` (decoded,
 * or a frame declaring more, or a window over the larger of `maxBytes` and 8 MiB, the least RFC
 * 8878 asks decoders to take) is `tooLarge`, with nothing past the limit held.
 */
export function decodeZstdFrames(
  bytes: Uint8Array,
  maxBytes: number,
  Decoder: ZstdStreamDecoder,
): ZstdOutcome {
  const frames = zstdFrames(bytes);
  if (typeof frames === 'string') return { invalid: frames };
  const maxWindow = Math.min(Math.max(maxBytes, 8 * 1024 * 1024), 2 ** 30);
  for (const frame of frames)
    if (frame.window > maxWindow || (frame.contentSize ?? 0) > maxBytes) return { tooLarge: true };
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (const frame of frames) {
    const before = total;
    const decoder = new Decoder((chunk) => {
      total += chunk.length;
      if (total > maxBytes) throw new RangeError('over the limit');
      chunks.push(chunk);
    });
    try {
      decoder.push(bytes.subarray(frame.start, frame.end), true);
    } catch (error) {
      return total > maxBytes ? { tooLarge: true } : { invalid: String((error as Error).message) };
    }
    if (frame.contentSize !== undefined && total - before !== frame.contentSize)
      return { invalid: 'a frame whose content is not the size it declares' };
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return { bytes: out };
}
