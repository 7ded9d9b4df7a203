/**
 * `npm run demo`: a long synthetic coding session (about 3x a 128k window) through the
 * default CompactManager (gpt-4o, 128k, embedded summarizer), preflight before every
 * model call, printing each compaction. No API key, no server.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { AnyCompactEvent } from '../src/core/events/events.js';
import { CompactManager } from '../src/index.js';
import { renderReport } from '../src/report/render-report.js';
import { buildTraceModel, levelLabel } from '../src/report/trace-model.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

const fmt = (n: number) => n.toLocaleString('en-US');
const manager = new CompactManager(); // defaults: gpt-4o, 128k window, policy of the spec
const session = syntheticSession({ turns: 420, seed: 2026, toolDensity: 3, resultChars: 1400 });
const total = manager.estimate(session).total;
console.log(
  `agent-compaction demo: ${fmt(session.length)} messages, ${fmt(total)} tokens of raw history through ${manager.model} (${fmt(manager.maxContextTokens)}-token window, trigger at ${fmt(manager.triggerTokens)}, budget ${fmt(manager.budget)})\n`,
);

manager.on('compact.summary_created', (event) => {
  const p = event.properties;
  console.log(
    `   summary v${p.version}: ${p.summarizer}, ${fmt(p.inputMessages)} messages (${fmt(p.inputTokens)} tokens) -> ${fmt(p.summaryTokens)} tokens, ratio ${p.compressionRatio.toFixed(3)}`,
  );
});

// Every event (redacted) goes into the HTML report written at the end.
const events: AnyCompactEvent[] = [];
manager.on('*', (event) => void events.push(event as AnyCompactEvent));

const history: unknown[] = [];
let compactions = 0;
let maxSent = 0;
const started = performance.now();
for (const [index, message] of session.entries()) {
  history.push(message);
  // Only before a model call: where the model speaks next (every tool result of a round in).
  const next = session[index + 1] as { role: string } | undefined;
  if (next !== undefined && next.role !== 'assistant') continue;
  if ((message as { role: string }).role === 'assistant') continue;
  const result = await manager.compact('demo-session', history);
  maxSent = Math.max(maxSent, result.tokensAfter);
  if (result.applied) {
    compactions++;
    const levels = result.levels
      .map((level) => `${levelLabel(level.level)} ${fmt(level.count)} (-${fmt(level.tokensSaved)} tokens)`)
      .join(', ');
    console.log(
      `#${compactions} at message ${fmt(history.length)}: ${fmt(result.tokensBefore)} -> ${fmt(result.tokensAfter)} tokens | ${levels || 'no level ran'} | ${result.version === 0 ? 'no summary yet' : `summary v${result.version}`}`,
    );
  }
}
const elapsed = performance.now() - started;
const final = await manager.compact('demo-session', history);
console.log(
  `\n${compactions} compactions; the largest request sent was ${fmt(maxSent)} tokens (budget ${fmt(manager.budget)}); ${fmt(history.length)} raw messages now travel as ${fmt(final.messages.length)} (${fmt(final.tokensAfter)} tokens); ${(elapsed / 1000).toFixed(1)} s in all.`,
);
console.log('\nThe rolling summary the model sees now (first lines):\n');
console.log(final.summary?.text.split('\n').slice(0, 16).join('\n'));
await manager.shutdown();

const reportPath = resolve('.compact/demo-report.html');
await mkdir(resolve('.compact'), { recursive: true });
await writeFile(reportPath, renderReport(buildTraceModel(events), { source: 'npm run demo' }));
console.log(`\nReport (open it in a browser): ${reportPath}`);
