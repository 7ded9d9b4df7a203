/**
 * Cascade figures of issue 9, printed by `npm run bench`:
 * - a tool-heavy session grown one message per preflight through an 8,000-token window:
 *   triggers, the share that needed the summarizer, tokens saved per level;
 * - summarizer calls per 100 agent steps in 40-step tool loops (one user message, then tool
 *   rounds with `call_0` reused every step) through an 8,000-token window.
 * - warm preflight at 16,000 messages (objects reused), and the first call after a compaction.
 */
import { CompactManager, EmbeddedSummarizer, type SummarizeRequest, type Summarizer } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';
import { hasOpenToolCalls } from '../test/support/open-tool-calls.js';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

class CountingSummarizer implements Summarizer {
  readonly name = 'counting';
  readonly #inner = new EmbeddedSummarizer();
  calls = 0;
  summarize(request: SummarizeRequest) {
    this.calls++;
    return this.#inner.summarize(request);
  }
}

/** A session grown one message per call; returns what the cascade did. */
async function toolHeavy(): Promise<{ triggers: number; summarized: number; saved: Record<string, number> }> {
  const summarizer = new CountingSummarizer();
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000, summarizer });
  let triggers = 0;
  let summarized = 0;
  const saved: Record<string, number> = {};
  manager.on('compact.pruned_messages', () => triggers++);
  manager.on('compact.reduction', (event) => {
    saved[event.properties.level] = (saved[event.properties.level] ?? 0) + event.properties.tokensSaved;
    if (event.properties.level === 'summarize') summarized++;
  });
  const session = syntheticSession({ turns: 40, seed: 9, toolDensity: 4, resultChars: 1_600 });
  for (let n = 1; n <= session.length; n++) {
    if (!hasOpenToolCalls(session.slice(0, n))) await manager.preflight('heavy', session.slice(0, n));
  }
  return { triggers, summarized, saved };
}

/** One user message, then `steps` tool rounds, each preflighted with the view fed back (as an SDK loop does). */
async function toolLoop(steps: number, seed: number): Promise<number> {
  const summarizer = new CountingSummarizer();
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000, summarizer });
  let view: unknown[] = [
    { role: 'system', content: 'You are a coding agent. Use the tools.' },
    {
      role: 'user',
      content:
        'Migrate every handler in src/api to the new auth middleware; run the tests after each change.',
    },
  ];
  for (let step = 0; step < steps; step++) {
    view = await manager.preflight(`loop-${seed}`, view);
    const size = 300 + ((step * 7919 + seed * 104_729) % 2_600);
    view = [
      ...view,
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'bash', arguments: `{"cmd":"step ${step}"}` } },
        ],
      },
      {
        role: 'tool',
        tool_call_id: 'call_0',
        content: `step ${step} output: ${'log line ok\n'.repeat(size / 12)}`,
      },
    ];
  }
  await manager.preflight(`loop-${seed}`, view);
  return summarizer.calls;
}

/** Warm preflight at `count` messages, objects reused: median ms per call. */
async function warmAt(count: number): Promise<{ warm: number; first: number }> {
  const all = syntheticSession({ turns: Math.ceil(count / 4), seed: 3, toolDensity: 2, resultChars: 200 });
  // End on a complete round: cut right before a user message.
  let end = Math.min(count, all.length);
  while (end > 1 && (all[end] as { role?: string } | undefined)?.role !== 'user') end--;
  const base = all.slice(0, end);
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 10_000_000 });
  await manager.preflight('warm', base);
  const grown = [...base, { role: 'user', content: 'one more' }];
  let t = performance.now();
  await manager.preflight('warm', grown);
  const first = performance.now() - t;
  const times: number[] = [];
  for (let i = 0; i < 100; i++) {
    grown.push({ role: 'user', content: `follow-up ${i}` });
    t = performance.now();
    await manager.preflight('warm', grown);
    times.push(performance.now() - t);
  }
  return { warm: median(times), first };
}

const heavy = await toolHeavy();
console.log('Cascade, tool-heavy session grown one message per call in an 8,000-token window:');
console.log(
  `  triggers ${heavy.triggers}, needed the summarizer ${heavy.summarized} (${((100 * heavy.summarized) / Math.max(1, heavy.triggers)).toFixed(0)}%)`,
);
for (const [level, tokens] of Object.entries(heavy.saved))
  console.log(`  tokens saved by ${level.padEnd(20)} ${tokens}`);
const loops = [1, 2, 3, 4, 5];
const calls = await Promise.all(loops.map((seed) => toolLoop(40, seed)));
const per100 = (100 * calls.reduce((a, b) => a + b, 0)) / (40 * loops.length);
console.log(
  `Summarizer calls per 100 agent steps, 40-step tool loops in an 8,000-token window: ${per100.toFixed(1)}  target <= 10  (per loop: ${calls.join(', ')})`,
);
const at16k = await warmAt(16_000);
console.log(
  `Warm preflight at 16,000 messages (+1 message, objects reused), median of 100: ${at16k.warm.toFixed(3)} ms  target <= 0.5 ms (${at16k.warm <= 0.5 ? 'met' : 'MISSED'}); first call after indexing ${at16k.first.toFixed(3)} ms`,
);
export const cascadeFigures = { heavy, summarizerCallsPer100Steps: per100, warm16k: at16k };
