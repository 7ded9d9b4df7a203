/**
 * Speed of the built-in summarizer's instruction model (issue 45): sentences per second of CPU time on one
 * core, over the labelled real sentences (eval/data/instructions), first call (weights decoded)
 * excluded. `npx tsx bench/instruction-model.ts`; also printed by `npm run bench`.
 */
import { readFileSync } from 'node:fs';
import {
  isInstructionSentence,
  type LaterCue,
  type SentencePosition,
} from '../src/core/language/instruction-sentence.js';

/** Sentences classified per second, best of `rounds` passes over the labelled set. */
export function instructionModelSpeed(rounds = 5): { sentences: number; perSecond: number } {
  const rows = readFileSync(new URL('../eval/data/instructions/sentences.jsonl', import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(
      (line) =>
        JSON.parse(line) as { text: string; context: 'assistant' | 'person' } & {
          position: SentencePosition;
          later: LaterCue;
        },
    );
  isInstructionSentence('Warm up.');
  let best = 0;
  let flagged = 0;
  for (let round = 0; round < rounds; round++) {
    // CPU time, not wall time: on a shared machine the wall clock counts other processes' turns.
    const start = process.cpuUsage();
    for (const row of rows)
      if (isInstructionSentence(row.text, row.context, undefined, row.position, row.later)) flagged++;
    const used = process.cpuUsage(start);
    const seconds = (used.user + used.system) / 1e6;
    best = Math.max(best, rows.length / seconds);
  }
  if (flagged < 0) throw new Error('unreachable');
  return { sentences: rows.length, perSecond: best };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { sentences, perSecond } = instructionModelSpeed();
  console.log(
    `instruction model: ${Math.round(perSecond).toLocaleString('en')} sentences/s (best of 5 passes over ${sentences} real sentences, one core)`,
  );
}
