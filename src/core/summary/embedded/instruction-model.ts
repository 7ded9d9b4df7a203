/**
 * "Is this sentence an instruction to the assistant?" as a small learned model (issue 45): a
 * logistic regression over hashed features (instruction-features.ts), trained by
 * scripts/train-instruction-model.ts on labelled sentences of seven licensed sources
 * (eval/data/instructions/LABELS.md). The weights ship in the package (instruction-weights.ts,
 * one signed byte a bucket) and are decoded once; nothing is downloaded, nothing is random.
 */

import { FEATURE_BUCKETS, featuresOf, type InstructionContext } from './instruction-features.js';
import { INSTRUCTION_WEIGHT_SCALE, INSTRUCTION_WEIGHTS } from './instruction-weights.js';

/** A sentence is an instruction when its score is above this (log-odds 0: probability one half). */
export const INSTRUCTION_THRESHOLD = 0;

let weights: Float32Array | undefined;

/** The shipped weights, decoded on first use. */
function shippedWeights(): Float32Array {
  if (weights) return weights;
  const bytes = atob(INSTRUCTION_WEIGHTS);
  const out = new Float32Array(FEATURE_BUCKETS);
  for (let i = 0; i < FEATURE_BUCKETS && i < bytes.length; i++) {
    const byte = bytes.charCodeAt(i);
    out[i] = (byte > 127 ? byte - 256 : byte) * INSTRUCTION_WEIGHT_SCALE;
  }
  weights = out;
  return out;
}

/** The model's log-odds that `sentence`, said in `context`, is an instruction. */
export function instructionScore(
  sentence: string,
  context: InstructionContext = 'assistant',
  model: ArrayLike<number> = shippedWeights(),
): number {
  let score = 0;
  for (const bucket of featuresOf(sentence, context)) score += model[bucket] ?? 0;
  return score;
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
