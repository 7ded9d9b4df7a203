import { onProcessCachesRelease } from '../process-caches.js';
/**
 * "Is this sentence an instruction to the assistant?" as a small learned model (issue 45): two
 * logistic regressions over hashed features (instruction-features.ts), one over the plain view and
 * one over WordNet's word classes, their log-odds averaged, trained by
 * scripts/train-instruction-model.ts on labelled sentences of eleven licensed sources
 * (eval/data/instructions/LABELS.md). The weights ship in the package (instruction-weights.ts,
 * one signed byte a bucket) and are decoded once; nothing is downloaded, nothing is random.
 */

import { isDataLine } from './data-line.js';
import {
  FEATURE_BUCKETS,
  featuresOf,
  featureViewsOf,
  type InstructionContext,
  type LaterCue,
  type SentencePosition,
} from './instruction-features.js';
import {
  INSTRUCTION_LEXICAL_WEIGHT_SCALE,
  INSTRUCTION_LEXICAL_WEIGHTS,
  INSTRUCTION_WEIGHT_SCALE,
  INSTRUCTION_WEIGHTS,
} from './instruction-weights.js';
import type { MaterialCue } from './material-cue.js';

export { isDataLine } from './data-line.js';

/**
 * A sentence is an instruction when its score is above this (log-odds 0.1: probability 0.52).
 * Chosen on the leave-one-source-out table (eval/data/instructions/LABELS.md, fifteenth pass): at
 * 0 one environment statement of the SWE-agent transcripts too many was flagged held out (since
 * the sixteenth pass's reading of a report's subject, swe-agent meets 90/90 at 0 too; oasst1's
 * precision is 89.7% there).
 */
export const INSTRUCTION_THRESHOLD = 0.1;

/**
 * The model: two logistic regressions over two views of the sentence, the plain features and the
 * lexical view (WordNet's word classes), their log-odds averaged (issue 45, eighth pass: the
 * average keeps what each view gets right, eval/data/instructions/LABELS.md). A bare weights
 * array is a model over the plain view alone.
 */
export interface InstructionModel {
  plain: ArrayLike<number>;
  lexical: ArrayLike<number>;
}

let shipped: InstructionModel | undefined;
// 256 KB of array buffers: dropped with the last manager, decoded again on next use.
onProcessCachesRelease(() => {
  shipped = undefined;
});

/** Weights stored as signed bytes in base64, decoded. */
function decode(base64: string, scale: number): Float32Array {
  const bytes = atob(base64);
  const out = new Float32Array(FEATURE_BUCKETS);
  for (let i = 0; i < FEATURE_BUCKETS && i < bytes.length; i++) {
    const byte = bytes.charCodeAt(i);
    out[i] = (byte > 127 ? byte - 256 : byte) * scale;
  }
  return out;
}

/** The shipped model, decoded on first use. */
function shippedModel(): InstructionModel {
  shipped ??= {
    plain: decode(INSTRUCTION_WEIGHTS, INSTRUCTION_WEIGHT_SCALE),
    lexical: decode(INSTRUCTION_LEXICAL_WEIGHTS, INSTRUCTION_LEXICAL_WEIGHT_SCALE),
  };
  return shipped;
}

/**
 * Decodes the shipped model if it is not decoded; true when it did (256 KB of weights: a
 * caller gives it a step of its own rather than the first sentence scored).
 */
export function warmInstructionModel(): boolean {
  if (shipped !== undefined) return false;
  shippedModel();
  return true;
}

/** The log-odds of one linear model over its view's buckets. */
function linearScore(weights: ArrayLike<number>, buckets: readonly number[]): number {
  let score = 0;
  for (const bucket of buckets) score += weights[bucket] ?? 0;
  return score;
}

/** The model's log-odds that `sentence`, said in `context`, is an instruction. */
export function instructionScore(
  sentence: string,
  context: InstructionContext = 'assistant',
  model: InstructionModel | ArrayLike<number> = shippedModel(),
  position?: SentencePosition,
  later?: LaterCue,
): number {
  if (!('plain' in model)) return linearScore(model, featuresOf(sentence, context, position, false, later));
  const [plain, lexical] = featureViewsOf(sentence, context, position, later);
  return (linearScore(model.plain, plain) + linearScore(model.lexical, lexical)) / 2;
}

/**
 * True when `sentence`, said in `context`, is an instruction by `model`: never a line of data (a
 * key's armor or body, a token without words), never a sentence said to a person (the context
 * rule: between people, "Check this out!" is no work for an assistant) and never a sentence of
 * quoted material (`material` `quote`, material-cue.ts: a news item or a review given in quotation
 * marks to work on is the material, not the ask); else the model decides.
 */
export function isInstructionBy(
  sentence: string,
  context: InstructionContext = 'assistant',
  model: InstructionModel | ArrayLike<number> = shippedModel(),
  threshold = INSTRUCTION_THRESHOLD,
  position?: SentencePosition,
  later?: LaterCue,
  material?: MaterialCue,
): boolean {
  if (context === 'person' || material === 'quote' || isDataLine(sentence)) return false;
  return instructionScore(sentence, context, model, position, later) > threshold;
}

/** Weights as signed bytes in base64, and the scale that turns a byte back into a weight. */
export function encodeWeights(model: ArrayLike<number>): { base64: string; scale: number } {
  let max = 0;
  for (let i = 0; i < model.length; i++) max = Math.max(max, Math.abs(model[i] ?? 0));
  const scale = Number((max / 127 || 1).toPrecision(6));
  let binary = '';
  for (let i = 0; i < model.length; i++) {
    const byte = Math.max(-127, Math.min(127, Math.round((model[i] ?? 0) / scale)));
    binary += String.fromCharCode(byte & 0xff);
  }
  return { base64: btoa(binary), scale };
}
