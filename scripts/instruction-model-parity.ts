/**
 * A frozen digest of what the instruction model says (issue 45, point 1: made faster with the same
 * outputs): every decision, and hashes of every score (the float64 bits), every bucket list and
 * every later cue, over the labelled sentences (eval/data/instructions, test/fixtures/instructions)
 * and variants of them (other positions and cues, curly quotes, capitals, sentences over the
 * 600 characters read). `npx tsx scripts/instruction-model-parity.ts --write` writes
 * test/fixtures/instructions/model-parity.json; test/core/instruction-model-parity.test.ts compares.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { featuresOf, featureViewsOf } from '../src/core/language/instruction-features.js';
import { instructionScore, isDataLine } from '../src/core/language/instruction-model.js';
import {
  type InstructionContext,
  isInstructionSentence,
  type LaterCue,
  type SentencePosition,
} from '../src/core/language/instruction-sentence.js';
import { sentenceAsks } from '../src/core/language/later-cue.js';

interface Row {
  text: string;
  context: InstructionContext;
  position: SentencePosition;
  later: LaterCue;
}

const POSITIONS: readonly SentencePosition[] = ['only', 'first', 'middle', 'last'];
const LATER: readonly LaterCue[] = ['none', 'q', 'imp', 'q+imp'];

/** The labelled sentences, then variants of them. */
export function parityRows(): Row[] {
  const read = (path: string) =>
    readFileSync(new URL(path, import.meta.url), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Partial<Row> & { text: string });
  const labelled = read('../eval/data/instructions/sentences.jsonl').map((row) => ({
    text: row.text,
    context: row.context ?? 'assistant',
    position: row.position ?? 'only',
    later: row.later ?? 'none',
  }));
  const tuning = read('../test/fixtures/instructions/labelled-sentences.jsonl').map((row) => ({
    text: row.text,
    context: 'assistant' as const,
    position: 'only' as const,
    later: 'none' as const,
  }));
  const variants: Row[] = [];
  for (let i = 0; i < labelled.length; i += 3) {
    const row = labelled[i] as Row;
    const next = labelled[(i + 1) % labelled.length] as Row;
    const other = (k: number) => ({
      context: (k % 2 === 0 ? 'assistant' : 'person') as InstructionContext,
      position: POSITIONS[(i + k) % 4] as SentencePosition,
      later: LATER[(i + 2 * k) % 4] as LaterCue,
    });
    variants.push({ text: row.text, ...other(1) });
    variants.push({ text: row.text.replace(/'/g, '’').replace(/"/g, '“'), ...other(2) });
    variants.push({ text: row.text.toUpperCase(), ...other(3) });
    variants.push({ text: `${row.text} ${next.text}`, ...other(4) });
    if (i % 30 === 0)
      variants.push({ text: `${row.text} `.repeat(Math.ceil(700 / (row.text.length + 1))), ...other(5) });
  }
  return [...labelled, ...tuning, ...variants];
}

/** What the model says of `rows`: decisions in full, everything else hashed. */
export function instructionModelDigest(rows: readonly Row[] = parityRows()): Record<string, string | number> {
  let decisions = '';
  // A plain-view model whose weights all differ: its sum depends on every bucket and their order.
  const uneven = new Float32Array(1 << 15).map((_, i) => (Math.imul(i, 0x9e3779b1) >>> 20) / 977 - 2);
  let assistantDecisions = '';
  const scores = new Float64Array(rows.length * 2);
  const features = createHash('sha256');
  const cues = createHash('sha256');
  rows.forEach((row, k) => {
    decisions += isInstructionSentence(row.text, row.context, undefined, row.position, row.later) ? '1' : '0';
    assistantDecisions += isInstructionSentence(row.text, 'assistant', undefined, row.position, row.later)
      ? '1'
      : '0';
    scores[2 * k] = instructionScore(row.text, row.context, undefined, row.position, row.later);
    scores[2 * k + 1] = instructionScore(row.text, row.context, uneven, row.position, row.later);
    const [plain, lexical] = featureViewsOf(row.text, row.context, row.position, row.later);
    features.update(`${plain.join(',')}|${lexical.join(',')}|`);
    features.update(`${featuresOf(row.text, row.context, row.position, false, row.later).join(',')}|`);
    features.update(`${featuresOf(row.text, row.context, row.position, true, row.later).join(',')}\n`);
    cues.update(`${sentenceAsks(row.text)},${isDataLine(row.text) ? 1 : 0};`);
  });
  return {
    rows: rows.length,
    flagged: [...decisions].filter((d) => d === '1').length,
    decisions,
    assistantDecisions,
    scores: createHash('sha256').update(new Uint8Array(scores.buffer)).digest('hex'),
    features: features.digest('hex'),
    cuesAndDataLines: cues.digest('hex'),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const digest = instructionModelDigest();
  if (process.argv.includes('--write')) {
    const path = new URL('../test/fixtures/instructions/model-parity.json', import.meta.url);
    writeFileSync(path, `${JSON.stringify(digest, null, 2)}\n`);
  }
  const { decisions: _d, assistantDecisions: _a, ...rest } = digest;
  console.log(rest);
}
