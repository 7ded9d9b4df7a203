/**
 * Computes each multi-sentence prompt row's material cue (src/core/language/material-cue.ts;
 * issue 45, twelfth pass) from the raw prompts, as the extractor places rows, and writes
 * eval/data/instructions/material-cues.json (`source|text` -> cue, `none` left out):
 *   npx tsx scripts/material-cues.ts <raw-dir>
 * where <raw-dir> holds selfinstruct.jsonl, mtbench.jsonl, vicuna.jsonl and lottery.jsonl, the
 * files scripts/extract-instruction-data.ts reads (LABELS.md names their commits). SWE-agent rows
 * are placed in test/fixtures/swe-agent. One-sentence turns (SGD, CamRest676) and rules files have
 * no earlier sentence: `none`.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readLabelled } from '../eval/instruction-model-folds.js';
import { type MaterialCue, materialCuesOf } from '../src/core/language/material-cue.js';
import { splitSentences } from '../src/core/summary/embedded/units.js';
import { sweAgentTurns } from './swe-agent-turns.js';

const raw = process.argv[2];
if (!raw) throw new Error('usage: npx tsx scripts/material-cues.ts <raw-dir>');
const OUT = 'eval/data/instructions/material-cues.json';
const lines = (file: string) => readFileSync(join(raw, file), 'utf8').split('\n').filter(Boolean);

/** Each source's messages, in the extractor's order. */
const messages: Record<string, string[]> = {
  'self-instruct': lines('selfinstruct.jsonl').map(
    (l) => (JSON.parse(l) as { instruction: string }).instruction,
  ),
  'fastchat-bench': ['mtbench.jsonl', 'vicuna.jsonl'].flatMap((f) =>
    lines(f).flatMap((l) => (JSON.parse(l) as { turns: string[] }).turns),
  ),
  oasst1: [...lines('lottery.jsonl'), ...lines('en100.jsonl')].map((l) => JSON.parse(l) as string),
  'swe-agent': sweAgentTurns(),
};

/** The cue of `text` at its first place in `source`'s messages (the extractor keeps a text's first occurrence). */
const firstCue = new Map<string, MaterialCue>();
for (const [source, list] of Object.entries(messages))
  for (const message of list) {
    const sentences = splitSentences(message);
    const cues = materialCuesOf(sentences);
    sentences.forEach((s, k) => {
      const key = `${source}|${s.toLowerCase()}`;
      if (!firstCue.has(key)) firstCue.set(key, cues[k] as MaterialCue);
    });
  }

/** Hand-cut rows (oasst1, swe-agent) may be a part of a split sentence: placed by their first 40 characters. */
function placed(source: string, text: string): MaterialCue | undefined {
  const exact = firstCue.get(`${source}|${text.toLowerCase()}`);
  if (exact) return exact;
  const probe = text.slice(0, 40);
  for (const message of messages[source] ?? []) {
    if (!message.includes(probe)) continue;
    const sentences = splitSentences(message);
    const k = sentences.findIndex((s) => s.includes(probe) || probe.includes(s));
    if (k >= 0) return materialCuesOf(sentences)[k];
  }
  return undefined;
}

const out: Record<string, MaterialCue> = {};
const counts: Record<string, number> = {};
let missing = 0;
for (const row of readLabelled(['oasst1-en100'])) {
  if (!(row.source in messages)) continue;
  const cue = placed(row.source, row.text);
  if (cue === undefined) {
    missing++;
    continue;
  }
  counts[`${row.source} ${cue}`] = (counts[`${row.source} ${cue}`] ?? 0) + 1;
  if (cue !== 'none') out[`${row.source}|${row.text}`] = cue;
}
writeFileSync(OUT, `${JSON.stringify(out, null, 1)}\n`);
console.log(counts, `${missing} rows not placed`);
