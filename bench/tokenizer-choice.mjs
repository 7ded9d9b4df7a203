// Measures the candidate tokenizer packages on one realistic ~128k-token corpus
// built from the real SWE-agent transcripts vendored in test/fixtures/swe-agent. Each candidate runs
// in its own process (cold start and memory are per process): node bench/tokenizer-choice.mjs
// ai-tokenizer was measured too (warm 32 ms, but 680 ms load and +151 MB); it is not kept as a
// dev dependency because its optional peer pins `ai` to v5.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const candidates = {
  'gpt-tokenizer': `const m = await import('gpt-tokenizer/encoding/o200k_base'); return (s) => m.countTokens(s);`,
  'js-tiktoken': `const { Tiktoken } = await import('js-tiktoken/lite'); const r = (await import('js-tiktoken/ranks/o200k_base')).default; const t = new Tiktoken(r); return (s) => t.encode(s, [], []).length;`,
  tiktoken: `const { get_encoding } = await import('tiktoken'); const e = get_encoding('o200k_base'); return (s) => e.encode_ordinary(s).length;`,
};

function corpus() {
  const dir = new URL('../test/fixtures/swe-agent/', import.meta.url);
  const texts = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.traj'))) {
    const traj = JSON.parse(readFileSync(new URL(f, dir), 'utf8'));
    for (const m of traj.history) {
      const c = typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? '').join('\n');
      texts.push(c);
    }
  }
  return texts;
}

if (process.argv[2] === '--child') {
  const name = process.argv[3];
  const texts = corpus();
  const messages = [];
  let i = 0;
  while (messages.length < 1000) messages.push(`${texts[i % texts.length].slice(0, 2400)} #${i++}`);
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const count = await new Function(`return (async () => { ${candidates[name]} })()`)();
  const loadMs = performance.now() - t0;
  const t1 = performance.now();
  let total = 0;
  for (const m of messages) total += count(m);
  const coldMs = performance.now() - t1;
  const warm = [];
  for (let r = 0; r < 5; r++) {
    const s = performance.now();
    for (const m of messages) count(m);
    warm.push(performance.now() - s);
  }
  warm.sort((a, b) => a - b);
  const special = (() => {
    try {
      return count('hello <|endoftext|> world');
    } catch (e) {
      return `throws: ${e.message.slice(0, 40)}`;
    }
  })();
  console.log(
    JSON.stringify({
      name,
      total,
      loadMs: +loadMs.toFixed(1),
      coldMs: +coldMs.toFixed(1),
      warmMedianMs: +warm[2].toFixed(1),
      rssMB: +((process.memoryUsage().rss - rss0) / 1e6).toFixed(0),
      special,
    }),
  );
} else {
  const self = fileURLToPath(import.meta.url);
  for (const name of Object.keys(candidates)) {
    process.stdout.write(execFileSync(process.execPath, [self, '--child', name], { encoding: 'utf8' }));
  }
}
