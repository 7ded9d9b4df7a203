/**
 * Counting without a match object per piece. gpt-tokenizer's `countTokens` splits text with
 * `matchAll`: a match array and a string per piece (about four characters), most of what a
 * cold count allocated (issue 47 point 2: 704 of 900 MB on a cold 16k-message call), each
 * allocation bringing the next scavenge nearer. Here the same expression, sticky, is tested at
 * the end of the previous piece (`test` builds no match array), and the piece is sliced once.
 *
 * The pre-tokenizer's expressions match at every position, so the pieces are those `matchAll`
 * gives; a text where the sticky test fails somewhere (a gap `matchAll` would skip) or matches
 * the empty string is counted by `countTokens` itself, so a count never differs from it.
 *
 * With the library's own rank table (an encoding built by `loadEncodingInSlices`, see
 * rank-table.ts) a piece is looked up where it lies in the text (`rankAt`), not sliced out: only
 * a piece that is no token of the table (split by `bytePairEncode`) is made a string. A cold
 * count of a 20k-message history allocated 334 MB, 103 MB of it these slices.
 */
import type { BpeEncoding } from './load-encoding.js';
import { RankTable } from './rank-table.js';

/** The parts of gpt-tokenizer's `BytePairEncodingCore` (4.x) a count uses. */
interface PieceCore {
  tokenSplitRegex: RegExp;
  bytePairStringRankEncoder?: unknown;
  getBpeRankFromString(piece: string): number | undefined;
  bytePairEncode(piece: string): ArrayLike<number>;
}

function isPieceCore(core: unknown): core is PieceCore {
  const c = core as Partial<PieceCore> | undefined;
  return (
    c !== undefined &&
    c.tokenSplitRegex instanceof RegExp &&
    c.tokenSplitRegex.global &&
    typeof c.getBpeRankFromString === 'function' &&
    typeof c.bytePairEncode === 'function'
  );
}

/** Special-token strings counted as ordinary text (as the counter does). */
const NO_SPECIAL = { disallowedSpecial: new Set<string>() };

const counters = new WeakMap<BpeEncoding, (text: string) => number>();

/** Counters built so far in this process (tests read it: a counter built by `ready()`, not by a first count). */
let built = 0;

/** Pieces made into strings by the counters so far (tests read it: a token of the table is not). */
let sliced = 0;

/** How many pieces the counters have sliced out of their texts in this process. */
export function piecesSliced(): number {
  return sliced;
}

/** How many counters {@link piecesCounterOf} has built in this process. */
export function piecesCountersBuilt(): number {
  return built;
}

/** The count of `text` with `encoding`, as `encoding.countTokens(text, NO_SPECIAL)`. */
export function piecesCounterOf(encoding: BpeEncoding): (text: string) => number {
  let counter = counters.get(encoding);
  if (counter === undefined) {
    counter = makeCounter(encoding);
    counters.set(encoding, counter);
    built++;
  }
  return counter;
}

/** Encodings whose counter has counted once (its expression compiled). */
const warmed = new WeakSet<BpeEncoding>();

/**
 * Builds `encoding`'s counter and counts a short text with it once, so that its expression is
 * compiled (V8 compiles an expression on its first runs): `ready()` calls it, so that a fresh
 * process's first call does not.
 */
export function warmPiecesCounter(encoding: BpeEncoding): void {
  if (warmed.has(encoding)) return;
  warmed.add(encoding);
  piecesCounterOf(encoding)('warm up the counter 123, twice: warm up the counter 123.');
}

function makeCounter(encoding: BpeEncoding): (text: string) => number {
  const whole = (text: string) => encoding.countTokens(text, NO_SPECIAL);
  const core = (encoding as { bytePairEncodingCoreProcessor?: unknown }).bytePairEncodingCoreProcessor;
  if (!isPieceCore(core)) return whole;
  const split = core.tokenSplitRegex;
  const sticky = new RegExp(split.source, `${split.flags.replace('g', '')}y`);
  const table =
    core.bytePairStringRankEncoder instanceof RankTable ? core.bytePairStringRankEncoder : undefined;
  return (text) => {
    let count = 0;
    for (let at = 0; at < text.length; ) {
      sticky.lastIndex = at;
      if (!sticky.test(text) || sticky.lastIndex === at) return whole(text);
      const end = sticky.lastIndex;
      if (table !== undefined && table.rankAt(text, at, end) !== undefined) {
        count++;
        at = end;
        continue;
      }
      const piece = text.slice(at, end);
      sliced++;
      count +=
        table === undefined && core.getBpeRankFromString(piece) !== undefined
          ? 1
          : core.bytePairEncode(piece).length;
      at = end;
    }
    return count;
  };
}
