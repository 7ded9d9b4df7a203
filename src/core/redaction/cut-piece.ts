import { REDACTED } from './replace-match.js';

/** A redactor (`Redactor` of redactor.ts, named here so the two files do not import each other). */
type Redactor = (text: string) => string;

/** Characters the two strings share at their start. */
export function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Characters the two strings share at their end, at most `max`. */
export function commonSuffix(a: string, b: string, max: number): number {
  let i = 0;
  while (i < max && a.charCodeAt(a.length - 1 - i) === b.charCodeAt(b.length - 1 - i)) i++;
  return i;
}

/**
 * `redacted` (the redaction of `original`) with its first `front` and last `back` characters of
 * the original replaced too. Where the redaction changed text that a cut reaches (a JWT caught
 * in the head's first characters, the rest of a Sentry token after it; a URL's password caught
 * in the tail, its user before it), that change and the cut become one replacement (secrets-88:
 * what the redaction left there was kept, the rest of the secret with it). With `redact`, the
 * text left of the piece is redacted again alone when that loses no change of `redacted`
 * (its redaction is where `redacted` starts or ends), so the text between a change the cut
 * reaches and another one is kept; without, it goes with them.
 */
export function cutPiece(
  original: string,
  redacted: string,
  front: number,
  back: number,
  redact?: Redactor,
): string {
  if (front === 0 && back === 0) return redacted;
  const length = original.length;
  if (front + back >= length) return REDACTED;
  let lead = front;
  let trail = back;
  let middle: string;
  if (redacted === original) {
    middle = original.slice(lead, length - trail);
  } else {
    // The redaction changed original[first, end) (one span from its first change to its last).
    const first = commonPrefix(original, redacted);
    const end = length - commonSuffix(original, redacted, Math.min(length, redacted.length) - first);
    if (front > 0 && first < front) lead = Math.max(front, end);
    if (back > 0 && end > length - back) trail = Math.max(back, length - first);
    if (redact && (lead > front || trail > back)) {
      const kept = keptBetween(original, redacted, front, back, redact);
      if (kept !== undefined) return kept;
    }
    if (lead + trail >= length) return REDACTED;
    // The change is in the middle (both ends of the text are as they were), or inside the cuts.
    middle =
      first >= lead && end <= length - trail
        ? redacted.slice(lead, redacted.length - trail)
        : original.slice(lead, length - trail);
  }
  return `${front > 0 ? REDACTED : ''}${middle}${back > 0 ? REDACTED : ''}`;
}

/**
 * The piece with its cuts replaced and the text between redacted alone, when that redaction
 * is where `redacted` starts (a back cut) or ends (a front cut): then no change of `redacted`
 * is lost (one that crossed into a cut is in it), else undefined.
 */
function keptBetween(
  original: string,
  redacted: string,
  front: number,
  back: number,
  redact: Redactor,
): string | undefined {
  let rest = redacted;
  let middle = original;
  if (back > 0) {
    middle = original.slice(0, original.length - back);
    const alone = redact(middle);
    if (!rest.startsWith(alone)) return undefined;
    rest = alone;
  }
  if (front > 0) {
    middle = middle.slice(front);
    const alone = redact(middle);
    if (!rest.endsWith(alone)) return undefined;
    rest = alone;
  }
  return `${front > 0 ? REDACTED : ''}${rest}${back > 0 ? REDACTED : ''}`;
}
