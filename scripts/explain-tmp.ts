import { readFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { FeatureSink, featureTag, FEATURE_BUCKETS, mix } from '../src/core/language/feature-sink.js';
import { featuresOf } from '../src/core/language/instruction-features.js';
import { readLabelled, trainModel, type ExtraSet } from '../eval/instruction-model-folds.js';
const tags = execSync(`grep -rhoE "featureTag\\('[^']+'\\)" src/core/language`).toString().match(/'[^']+'/g)!.map((s) => s.slice(1, -1));
const byHash = new Map(tags.map((t) => [featureTag(t).hash, t]));
const log = new Map<number, string>();
const part = (h: number, t: string) => mix(Math.imul(h ^ 32, 0x01000193), t);
const orig = FeatureSink.prototype.add;
FeatureSink.prototype.add = function (twin, tag, a, b, c) {
  let h = mix(tag.hash, a);
  if (b !== undefined) h = part(h, b);
  if (c !== undefined) h = part(h, c);
  const bucket = (h >>> 0) & (FEATURE_BUCKETS - 1);
  if (!log.has(bucket)) log.set(bucket, `${byHash.get(tag.hash) ?? '?'}${a}${b !== undefined ? ` ${b}` : ''}${c !== undefined ? ` ${c}` : ''}`);
  return orig.call(this, twin, tag, a, b, c);
};
const extra = process.argv[2].split(',') as ExtraSet[];
const held = process.argv[3];
const texts = process.argv.slice(4);
const rows = readLabelled(extra);
const model = trainModel(rows.filter((r) => r.source !== held));
const FNV = (s: string) => { let h = 0x811c9dc5; for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193); return h; };
for (const text of texts) {
  const row = rows.find((r) => r.source === held && r.text.startsWith(text))!;
  for (const view of ['plain', 'lexical'] as const) {
    log.clear();
    const buckets = featuresOf(row.text, row.context, row.position, view === 'lexical', row.later);
    // Map each logged feature to its bucket by recomputing its hash the sink's way is intricate: list buckets with weights, and names in order.
    const w = model[view];
    const contrib = buckets.map((b) => [log.get(b) ?? 'sfx?', w[b] as number] as const).sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]));
    console.log(`${row.text.slice(0, 60)} [${view}] ${row.position}/${row.later} sum ${contrib.reduce((s, c) => s + c[1], 0).toFixed(2)}`);
    console.log('   ' + contrib.slice(0, 12).map(([n, v]) => `${n}=${v.toFixed(2)}`).join('  '));
  }
}
