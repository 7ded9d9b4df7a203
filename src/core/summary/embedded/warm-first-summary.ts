/**
 * What a fresh process's first built-in summary would build in one piece, built ahead
 * (`CompactManager.ready()`), each in a turn of the loop of its own: the sentence segmenter
 * (ICU's break rules, ~14 ms of CPU that cannot be cut) and the instruction model's weights.
 */
import { warmInstructionModel } from '../../language/instruction-model.js';
import { nextTurn } from '../../time-slice.js';
import { warmSentenceSegmenter } from './units.js';

/** Builds the segmenter and decodes the model when the process has not yet, a turn of the loop before each. */
export async function warmFirstSummary(): Promise<void> {
  await nextTurn();
  warmSentenceSegmenter();
  await nextTurn();
  warmInstructionModel();
}
