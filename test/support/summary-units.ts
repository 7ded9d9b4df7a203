import type { Unit } from '../../src/core/summary/embedded/types.js';
import { contentWords } from '../../src/core/summary/embedded/units.js';

/** A builder of the built-in summarizer's units: a user's, in segment 0, numbered in the order made. */
export function unitMaker(): (text: string, extra?: Partial<Unit>) => Unit {
  let order = 0;
  return (text, extra = {}) => ({
    text,
    speaker: 'user',
    source: 'user',
    segment: 0,
    order: order++,
    words: contentWords(text),
    value: 0,
    ...extra,
  });
}
