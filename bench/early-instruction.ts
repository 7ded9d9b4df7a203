// Reproduces review-85b's lost early instruction (bench/notes/review-85b-early-instruction.md): POS=start|early|mid|end WINDOW=8000 npx tsx bench/early-instruction.ts
import { CompactManager } from '../src/index.js';
import {
  batchFileRound,
  README_FACTS,
  README_SECTIONS,
} from '../test/fixtures/early-instruction/pasted-readme.js';

const WINDOW = Number(process.env.WINDOW ?? 8000);
const para = README_FACTS;
const sections = README_SECTIONS;
let body = '# ingest-service\n\n';
let k = 0;
for (const s of sections) {
  body += `## ${s}\n\n`;
  for (let j = 0; j < Number(process.env.PER ?? 6); j++) body += para[(k++ * 7 + j) % para.length] + ' ';
  body += '\n\n';
}
const POS = process.env.POS ?? 'mid';
const instr = 'Always answer in French.';
const instr2 = 'Never modify files under vendor/.';
let first: string;
if (POS === 'start')
  first = `${instr} ${instr2}\n\nHere is our README:\n\n${body}\nPlease fix the flaky batching test.`;
else if (POS === 'end')
  first = `Here is our README:\n\n${body}\nPlease fix the flaky batching test. ${instr} ${instr2}`;
else if (POS === 'early')
  first = `Here is our README, read it before you start:\n\n${body.slice(0, 600)}\n\n${instr} ${instr2}\n\n${body.slice(600)}\nPlease fix the flaky batching test.`;
else
  first = `Here is our README, read it before you start:\n\n${body.slice(0, body.length / 2)}\n\n${instr} ${instr2}\n\n${body.slice(body.length / 2)}\nPlease fix the flaky batching test in test/integration/batch.test.ts.`;
const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
console.log('first message tokens', manager.estimate([{ role: 'user', content: first }]).total);
const messages: Record<string, unknown>[] = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: first },
];
const lostAt: number[] = [];
const lost2: number[] = [];
let compactions = 0;
manager.on('compact.pruned_messages', () => compactions++);
let last = '[]';
for (let r = 1; r <= Number(process.env.ROUNDS ?? 150); r++) {
  messages.push(...batchFileRound(r));
  if (r % 40 === 0) messages.push({ role: 'user', content: `Keep going, look at module ${r % 37} next.` });
  const out = await manager.compact('s', messages);
  const text = JSON.stringify(out.messages);
  last = text;
  if (!text.includes('answer in French')) lostAt.push(r);
  if (!text.includes('vendor/')) lost2.push(r);
}
console.log('compactions', compactions);
console.log('French lost in rounds', lostAt.length, lostAt.slice(0, 5));
console.log('vendor lost in rounds', lost2.length, lost2.slice(0, 5));
if (process.env.SHOW) {
  const s = (JSON.parse(last) as { content: unknown }[]).find((m) =>
    JSON.stringify(m).includes('COMPACT-SUMMARY'),
  );
  console.log(typeof s?.content === 'string' ? s.content.slice(0, 3000) : JSON.stringify(s).slice(0, 3000));
}
await manager.shutdown();
