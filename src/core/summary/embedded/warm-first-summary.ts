/**
 * What a fresh process's first built-in summary would build in one piece, built ahead
 * (`CompactManager.ready()`), each in a turn of the loop of its own: the sentence segmenter
 * (ICU's locales and break rules, ~14-20 ms of CPU loaded in three pieces), the rank table of
 * general English (10-18 ms of CPU, a few hundred words a turn) and the instruction model's weights.
 */
import { warmInstructionModel } from '../../language/instruction-model.js';
import { wordRankSteps } from '../../language/word-rarity.js';
import { nextTurn } from '../../time-slice.js';
import { warmSentenceSegmenterSteps } from './units.js';

/** Builds the segmenter and the rank table and decodes the model when the process has not yet, a turn of the loop after each piece. */
export async function warmFirstSummary(): Promise<void> {
  await nextTurn();
  for (const _ of warmSentenceSegmenterSteps()) await nextTurn();
  for (const _ of wordRankSteps()) await nextTurn();
  warmInstructionModel();
}
