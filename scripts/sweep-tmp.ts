import { judgedFigures, readLabelled, scoreRows, trainModel, type ExtraSet } from '../eval/instruction-model-folds.js';
const extra = (process.argv[2] ?? '').split(',').filter(Boolean) as ExtraSet[];
const rows = readLabelled(extra);
const sources = [...new Set(rows.map((r) => r.source))];
const ths = [-0.25, 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
const lines: string[] = [];
const worst = ths.map(() => 1);
for (const s of sources) {
  const model = trainModel(rows.filter((r) => r.source !== s));
  const held = rows.filter((r) => r.source === s);
  const cells = ths.map((t, i) => {
    const j = judgedFigures(scoreRows(held, model, s, t));
    worst[i] = Math.min(worst[i] as number, j.precision, j.recall);
    return `${(100 * j.precision).toFixed(1)}/${(100 * j.recall).toFixed(1)}`.padEnd(12);
  });
  lines.push(`${s.padEnd(15)} ${cells.join(' ')}`);
}
console.log(`${'threshold'.padEnd(15)} ${ths.map((t) => String(t).padEnd(12)).join(' ')}`);
for (const l of lines) console.log(l);
console.log(`${'worst'.padEnd(15)} ${worst.map((w) => (100 * w).toFixed(1).padEnd(12)).join(' ')}`);
