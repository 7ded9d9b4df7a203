// Other shapes of "instructions given once early" (review-86d, bench/notes/review-86d-instructions.md):
// SHAPE=tool-result|developer|second-user|image|german|list|rewind|fork WINDOW=4000 npx tsx bench/early-instruction-shapes.ts
import { CompactManager } from '../src/index.js';
import {
  batchFileRound,
  README_FACTS,
  README_SECTIONS,
} from '../test/fixtures/early-instruction/pasted-readme.js';

const WINDOW = Number(process.env.WINDOW ?? 4000);
const SHAPE = process.env.SHAPE ?? 'image';
const ROUNDS = Number(process.env.ROUNDS ?? 150);
let readme = '# ingest-service\n\n';
let k = 0;
for (const s of README_SECTIONS) {
  readme += `## ${s}\n\n`;
  for (let j = 0; j < 6; j++) readme += `${README_FACTS[(k++ * 7 + j) % README_FACTS.length]} `;
  readme += '\n\n';
}
const half = readme.length / 2;
const EN = ['Always answer in French.', 'Never modify files under vendor/.'];
const DE = ['Antworte immer auf Französisch.', 'Ändere niemals Dateien unter vendor/.'];
const LIST = [
  '1. Always answer in French.',
  '2. Never modify files under vendor/.',
  '3. Run npm test before every commit.',
];
const checks: Record<string, string[]> = {
  german: DE,
  list: ['answer in French', 'vendor/', 'npm test before every commit'],
  'tool-result': [...EN, 'Read SPEC.md and follow it.'],
};
const wanted = checks[SHAPE] ?? EN;
const paste = (rules: string) =>
  `Here is our README, read it before you start:\n\n${readme.slice(0, half)}\n\n${rules}\n\n${readme.slice(half)}\nPlease fix the flaky batching test in test/integration/batch.test.ts.`;
const system = { role: 'system', content: 'You are a coding agent.' };
const head: Record<string, unknown>[] = [system];
let later: Record<string, unknown> | undefined;
if (SHAPE === 'tool-result') {
  head.push({ role: 'user', content: 'Read SPEC.md and follow it. Then fix the flaky batching test.' });
  head.push({
    role: 'assistant',
    content: '',
    tool_calls: [
      { id: 'spec', type: 'function', function: { name: 'read_file', arguments: '{"path":"SPEC.md"}' } },
    ],
  });
  head.push({ role: 'tool', tool_call_id: 'spec', content: paste(EN.join(' ')) });
} else if (SHAPE === 'developer') head.push({ role: 'developer', content: paste(EN.join(' ')) });
else if (SHAPE === 'second-user') {
  head.push({
    role: 'user',
    content: 'Please fix the flaky batching test in test/integration/batch.test.ts.',
  });
  later = { role: 'user', content: paste(EN.join(' ')) };
} else if (SHAPE === 'image')
  head.push({
    role: 'user',
    content: [
      { type: 'text', text: paste(EN.join(' ')) },
      {
        type: 'image_url',
        image_url: {
          url: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
        },
      },
      { type: 'text', text: 'The screenshot shows the failing run.' },
    ],
  });
else if (SHAPE === 'german') head.push({ role: 'user', content: paste(DE.join(' ')) });
else if (SHAPE === 'list') head.push({ role: 'user', content: paste(`Rules:\n${LIST.join('\n')}`) });
else head.push({ role: 'user', content: paste(EN.join(' ')) });

const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
let compactions = 0;
manager.on('compact.pruned_messages', () => compactions++);
const lost = new Map<string, number[]>(wanted.map((w) => [w, []]));
let messages: Record<string, unknown>[] = [...head];
let session = 's';
const total = SHAPE === 'second-user' ? ROUNDS * 2 : ROUNDS;
let last = '';
for (let r = 1; r <= total; r++) {
  if (later && r === ROUNDS + 1) messages.push(later);
  messages.push(...batchFileRound(r));
  if (r % 40 === 0) messages.push({ role: 'user', content: `Keep going, look at module ${r % 37} next.` });
  // rewind: at round 100 the user goes back to round 60's history and carries on from there.
  if (SHAPE === 'rewind' && r === 100) messages = messages.slice(0, head.length + 60 * 2 + 1);
  // fork: at round 100 a second session continues from round 60's history.
  if (SHAPE === 'fork' && r === 100) {
    messages = messages.slice(0, head.length + 60 * 2 + 1);
    session = 'fork';
  }
  const out = await manager.compact(session, messages);
  const text = JSON.stringify(out.messages);
  last = text;
  if (later && r <= ROUNDS) continue;
  for (const w of wanted) if (!text.includes(JSON.stringify(w).slice(1, -1))) lost.get(w)!.push(r);
}
console.log(SHAPE, 'window', WINDOW, 'compactions', compactions);
for (const [w, rounds] of lost) console.log(`  ${w}: lost in ${rounds.length} rounds`, rounds.slice(0, 4));
if (process.env.SHOW) {
  const s = (JSON.parse(last) as unknown[]).find((m) => JSON.stringify(m).includes('COMPACT-SUMMARY'));
  console.log(JSON.stringify(s).slice(0, 2500));
}
await manager.shutdown();
