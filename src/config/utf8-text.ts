import { isUtf8 } from 'node:buffer';

/**
 * Why `bytes` are not UTF-8 text, or `undefined` when they are: the 1-based line of the first
 * invalid byte (a Latin-1 `é`), or the UTF-16 byte-order mark. Decoding such bytes as UTF-8
 * would replace each invalid byte by U+FFFD and go on with text the file never held.
 */
export function notUtf8(bytes: Uint8Array): string | undefined {
  if (isUtf8(bytes)) return undefined;
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    return 'is UTF-16, not UTF-8 (save it as UTF-8)';
  // A newline byte is never inside a UTF-8 sequence: line by line finds the first bad one.
  let start = 0;
  for (let line = 1; ; line++) {
    const end = bytes.indexOf(0x0a, start);
    if (!isUtf8(bytes.subarray(start, end === -1 ? bytes.length : end)))
      return `is not UTF-8 text (line ${line}; save it as UTF-8)`;
    if (end === -1) return 'is not UTF-8 text (save it as UTF-8)';
    start = end + 1;
  }
}
