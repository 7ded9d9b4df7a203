/**
 * The held-out errors of the instruction model (issue 45, eleventh pass): for each source asked
 * for, the model trained on every other source scores that source's rows, and the rows it gets
 * wrong are listed with their score and what the model reads of their message (`position`,
 * `later`). `npx tsx scripts/train-instruction-model.ts --errors fastchat-bench,oasst1,swe-agent`.
 * The SWE-agent rows also show the message that holds them (test/fixtures/swe-agent): whether it
 * is the task or an environment message answering the agent's action.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { instructionScore, isDataLine } from '../src/core/language/instruction-model.js';
import { type LabelledSentence, trainModel } from './instruction-model-folds.js';

/** One held-out row the model got wrong. */
export interface HeldOutError {
  row: LabelledSentence;
  /** The averaged log-odds (over 0: flagged). */
  score: number;
  kind: 'false positive' | 'false negative';
  /** Where the row's message stands, when the source's messages are in the repository. */
  message?: string;
}

/** The rows of `source` the model trained on every other source gets wrong, highest score first. */
export function heldOutErrors(
  rows: readonly LabelledSentence[],
  source: string,
  train = trainModel,
): HeldOutError[] {
  const model = train(rows.filter((r) => r.source !== source));
  const out: HeldOutError[] = [];
  for (const row of rows) {
    if (row.source !== source || row.context === 'person' || isDataLine(row.text)) continue;
    const score = instructionScore(row.text, row.context, model, row.position, row.later);
    const truth = row.label === 'instruction';
    // A sentence of quoted material is never flagged (the rule of instruction-model.ts `isInstructionBy`).
    if ((row.material !== 'quote' && score > 0) === truth) continue;
    const kind = truth ? 'false negative' : 'false positive';
    const message = source === 'swe-agent' ? sweAgentPlace(row.text) : undefined;
    out.push(message === undefined ? { row, score, kind } : { row, score, kind, message });
  }
  return out.sort((a, b) => b.score - a.score);
}

interface TrajectoryMessage {
  role: string;
  content: unknown;
  action?: string;
}

let trajectories: Array<{ file: string; history: TrajectoryMessage[] }> | undefined;
/** Where a SWE-agent row stands: its trajectory, its message's index and what came before it. */
function sweAgentPlace(text: string): string | undefined {
  const dir = new URL('../test/fixtures/swe-agent/', import.meta.url).pathname;
  trajectories ??= readdirSync(dir)
    .filter((f) => f.endsWith('.traj'))
    .sort()
    .map((file) => ({ file, history: JSON.parse(readFileSync(join(dir, file), 'utf8')).history }));
  const probe = text.slice(0, 40);
  for (const { file, history } of trajectories)
    for (let i = 0; i < history.length; i++) {
      const m = history[i] as TrajectoryMessage;
      if (m.role !== 'user' || typeof m.content !== 'string' || !m.content.includes(probe)) continue;
      const before = history[i - 1];
      const after =
        before?.role === 'assistant' ? 'after an assistant action' : `after ${before?.role ?? 'nothing'}`;
      const opening = m.content.slice(0, 70).replace(/\s+/g, ' ');
      return `${file} message ${i} (${after}; ${m.content.length} chars): "${opening}..."`;
    }
  return undefined;
}

/** The errors as lines of text. */
export function formatErrors(source: string, errors: readonly HeldOutError[]): string[] {
  const lines = [`${source}: ${errors.length} errors held out`];
  for (const e of errors) {
    const where = `${e.row.position}/${e.row.later}`;
    lines.push(
      `  ${e.kind === 'false positive' ? 'FP' : 'FN'} ${e.score.toFixed(2).padStart(6)} ${where.padEnd(12)} ${e.row.text}`,
    );
    if (e.message) lines.push(`        in ${e.message}`);
  }
  return lines;
}
