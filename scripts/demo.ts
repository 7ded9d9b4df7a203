/**
 * `npm run demo`: a coding agent fixes six tickets in a small TypeScript repository
 * (scripts/demo-story.ts), with the preflight before every model call, in a window small
 * enough that the history is compacted several times. Prints what each compaction did, the
 * summary the model now reads, and writes the HTML report. No API key, no server.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { AnyCompactEvent } from '../src/core/events/events.js';
import { CompactManager } from '../src/index.js';
import { renderReport } from '../src/report/render-report.js';
import { buildTraceModel } from '../src/report/trace-model.js';
import { codingStory } from './demo-story.js';

const fmt = (n: number) => n.toLocaleString('en-US');
const WINDOW = 4_096;
const LEVELS: Record<string, string> = {
  clear_tool_results: 'cleared old tool output',
  shorten_arguments: 'shortened old tool arguments',
  summarize: 'summarized',
  cut_oversized: 'cut an oversized message',
};

const story = codingStory();
// A 4,096-token window (a small local model's) so that six tickets fill it several times.
const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
const raw = manager.estimate(story).total;
console.log(`agent-compaction demo: a coding agent fixes six tickets in tiny-invoice (TypeScript, vitest).
${fmt(story.length)} messages, ${fmt(raw)} tokens of history; the model gets a ${fmt(WINDOW)}-token window, so the
history is compacted as it grows (trigger at ${fmt(manager.triggerTokens)} tokens, budget ${fmt(manager.budget)}). Summaries
come from the built-in summarizer (offline, deterministic).
`);

const events: AnyCompactEvent[] = [];
manager.on('*', (event) => void events.push(event as AnyCompactEvent));

const history: unknown[] = [];
let calls = 0;
let compactions = 0;
let largest = 0;
for (const [index, message] of story.entries()) {
  history.push(message);
  const { role, content } = message as { role: string; content: unknown };
  if (role === 'user') {
    const sentence = String(content).split(/(?<=\.) /)[0];
    console.log(`${String(content).match(/INV-\d+/)?.[0] ?? 'task'}  ${sentence}`);
  }
  // A model call wherever the model speaks next.
  if ((story[index + 1] as { role?: string } | undefined)?.role !== 'assistant') continue;
  calls++;
  const result = await manager.compact('demo', history);
  largest = Math.max(largest, result.tokensAfter);
  if (!result.applied) continue;
  compactions++;
  const levels = result.levels
    .filter((level) => level.count > 0)
    .map(
      (level) =>
        `${LEVELS[level.level] ?? level.level} (${fmt(level.count)} messages, -${fmt(level.tokensSaved)})`,
    )
    .join('; ');
  console.log(
    `  call ${calls}: ${fmt(result.tokensBefore)} -> ${fmt(result.tokensAfter)} tokens | ${levels || 'nothing to remove'}${result.summary ? ` | summary v${result.version}` : ''}`,
  );
}

const final = await manager.compact('demo', history);
console.log(`
${compactions} compactions in ${calls} model calls; the largest request sent was ${fmt(largest)} tokens (budget ${fmt(manager.budget)}).
The ${fmt(story.length)} messages (${fmt(raw)} tokens) now travel as ${fmt(final.messages.length)} messages (${fmt(final.tokensAfter)} tokens):
the system prompt, one summary of the earlier tickets, and the ${fmt(final.messages.length - 2)} most recent messages verbatim.
`);
if (final.summary) {
  console.log(
    `What the model now reads instead of the earlier work (summary v${final.summary.version}, first lines):\n`,
  );
  const lines = final.summary.text.split('\n').filter((line) => line.trim() !== '');
  console.log(
    lines
      .slice(0, 40)
      .map((line) => `  ${line.length > 116 ? `${line.slice(0, 115)}…` : line}`)
      .join('\n'),
  );
}
await manager.shutdown();

const reportPath = resolve('.compact/demo-report.html');
await mkdir(resolve('.compact'), { recursive: true });
await writeFile(reportPath, renderReport(buildTraceModel(events), { source: 'npm run demo' }));
console.log(
  `\nReport, a chart of every call and a card per compaction (open it in a browser):\n  ${reportPath}`,
);
