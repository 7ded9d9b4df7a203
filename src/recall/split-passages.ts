/** A slice of an archived text, the unit the search index ranks. */
export interface Passage {
  /** Position in the passages of its text (0-based). */
  n: number;
  /** Character offsets `[start, end)` in the text. */
  start: number;
  end: number;
}

/** True when the code unit at `i` is the second half of a surrogate pair (never cut there). */
function isLowSurrogate(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Moves a cut position back off the middle of a surrogate pair. */
export function safeCut(text: string, i: number): number {
  return i > 0 && i < text.length && isLowSurrogate(text, i) ? i - 1 : i;
}

/**
 * Splits `text` into passages of at most `size` characters, cutting at a line break (else
 * a space) in the last quarter of a window when there is one. Linear in the text length, so
 * a 100 KB line or a long run of one character costs no more than any other text.
 */
export function splitPassages(text: string, size: number): Passage[] {
  const passages: Passage[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) {
      // Look for a break only inside the window's last quarter (never scan back further).
      const floor = start + Math.floor(size * 0.75);
      const tail = text.slice(floor, end);
      const newline = tail.lastIndexOf('\n');
      const space = newline >= 0 ? -1 : tail.lastIndexOf(' ');
      if (newline >= 0) end = floor + newline + 1;
      else if (space >= 0) end = floor + space + 1;
      end = safeCut(text, end);
      if (end <= start) end = Math.min(text.length, start + size);
    }
    passages.push({ n: passages.length, start, end });
    start = end;
  }
  return passages;
}
