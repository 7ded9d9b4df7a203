/**
 * Cuts the sentences of OpenHands CodeActAgent transcripts for hand labelling (issue 45,
 * fourteenth pass; eval/data/instructions/LABELS.md): every sentence of each transcript's system
 * message, first user message (the demonstration and the task) and observation messages (the
 * environment's feedback, shown to the model as user messages), split as the extractor splits,
 * lines of data left out (`isDataLine`), each text once (its first place), with its `position`,
 * `later` and `material` cue computed from its message. The assistant's messages are skipped.
 * Every row is written with the label `?`: the labels of openhands-hand-labelled.json were given
 * by hand, by LABELS.md's rules, before any model scored the rows.
 *
 *   npx tsx scripts/openhands-sentences.ts <dir> > draft.json
 *
 * where <dir> holds the `prompt_*.log` files of All-Hands-AI/OpenHands @8e5db34
 * tests/integration/mock/eventstream_runtime/CodeActAgent/<test>/ (the last prompt of each test,
 * saved as `<test>_prompt_NNN.log`).
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { positionOf } from '../src/core/language/instruction-features.js';
import { isDataLine } from '../src/core/language/instruction-model.js';
import { laterCuesOf } from '../src/core/language/later-cue.js';
import { materialCuesOf } from '../src/core/language/material-cue.js';
import { splitSentences } from '../src/core/summary/embedded/units.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: npx tsx scripts/openhands-sentences.ts <dir>');

/** Which side of the conversation a block of the log is: the log separates messages with a line of dashes. */
function kindOf(index: number, message: string): string {
  if (index === 0) return 'system';
  if (index === 1) return 'first-user';
  return /^OBSERVATION:/i.test(message) ? 'observation' : 'assistant';
}

const rows: object[] = [];
const seen = new Set<string>();
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.log'))
  .sort()) {
  const blocks = readFileSync(join(dir, file), 'utf8')
    .replace(/\r\n/g, '\n')
    .split(/\n+-{10}\n+/)
    .map((block) => block.trim())
    .filter(Boolean);
  blocks.forEach((message, i) => {
    const kind = kindOf(i, message);
    if (kind === 'assistant') return;
    const sentences = splitSentences(message);
    const later = laterCuesOf(sentences);
    const material = materialCuesOf(sentences);
    sentences.forEach((text, k) => {
      if (isDataLine(text) || seen.has(text.toLowerCase())) return;
      seen.add(text.toLowerCase());
      rows.push({
        text,
        label: '?',
        source: 'openhands',
        license: 'MIT',
        context: 'assistant',
        position: positionOf(k, sentences.length),
        later: later[k],
        material: material[k],
        origin: `${file.replace(/_prompt_\d+\.log$/, '')} ${kind} message`,
      });
    });
  });
}
process.stdout.write(`${JSON.stringify(rows, null, 1)}\n`);
