import { readFileSync } from 'node:fs';
import { isInstructionBy } from '../src/core/language/instruction-model.js';
import { countFold, judgedFigures, readLabelled, trainModel, type ExtraSet } from '../eval/instruction-model-folds.js';
const extra = (process.argv[2] ?? '').split(',').filter(Boolean) as ExtraSet[];
const rows = readLabelled(extra);
// Rule (a) emulated: a sentence of an environment message (OpenHands' observation messages) is never an instruction.
const RULE_A = process.argv[3] === 'rule-a';
const obs = new Set<string>();
for (const r of JSON.parse(readFileSync('eval/data/instructions/openhands-hand-labelled.json', 'utf8')) as Array<{ text: string; origin: string }>)
  if (r.origin.includes('observation message')) obs.add(r.text);
const outputRow = (r: { source: string; text: string }) => RULE_A && r.source === 'openhands' && obs.has(r.text);
const sources = [...new Set(rows.map((r) => r.source))];
const ths = [-0.25, 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
const lines: string[] = [];
const worst = ths.map(() => 1);
for (const s of sources) {
  const model = trainModel(rows.filter((r) => r.source !== s));
  const held = rows.filter((r) => r.source === s);
  const cells = ths.map((t, i) => {
    const said = new Set(held.filter((r) => !outputRow(r) && isInstructionBy(r.text, r.context, model, t, r.position, r.later, r.material)));
    const j = judgedFigures(countFold(held, s, (r) => said.has(r), (r) => r.label === 'instruction'));
    worst[i] = Math.min(worst[i] as number, j.precision, j.recall);
    return `${(100 * j.precision).toFixed(1)}/${(100 * j.recall).toFixed(1)}`.padEnd(12);
  });
  lines.push(`${s.padEnd(15)} ${cells.join(' ')}`);
}
console.log(`${'threshold'.padEnd(15)} ${ths.map((t) => String(t).padEnd(12)).join(' ')}`);
for (const l of lines) console.log(l);
console.log(`${'worst'.padEnd(15)} ${worst.map((w) => (100 * w).toFixed(1).padEnd(12)).join(' ')}`);
