/**
 * The compaction rhythm (issue 34 point 3), printed by `npm run bench` (`--no-rhythm` skips
 * it; `npx tsx bench/rhythm.ts` runs it alone): a coding session grows one tool round per call
 * with outputs of 1% to 25% of the window, at 8k, 32k, 128k and 1M windows, through the
 * manager with its defaults. Per row: compactions per 100 calls, what growth needs (each
 * compaction absorbs trigger minus target of the window), their ratio (goal <= 1.2), and the
 * share of compactions that end above their target (goal <= 10%).
 */
import { CompactManager } from '../src/index.js';

/** A tool output of about `tokens` tokens, distinct per call (about 12 tokens a line). */
function output(call: number, tokens: number): string {
  const lines: string[] = [];
  for (let k = 0; lines.length < tokens / 12; k++) lines.push(`row${call}_${k} = compute(${k}, "billing")`);
  return lines.join('\n');
}

export interface RhythmRow {
  window: number;
  share: number;
  calls: number;
  compactions: number;
  needed: number;
  aboveTarget: number;
}

async function runRow(window: number, share: number, calls: number): Promise<RhythmRow> {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: window });
  const text = output(0, share * window);
  const perCall = manager.estimate([{ role: 'tool', tool_call_id: 'c0', content: text }]).total;
  const history: Record<string, unknown>[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Port the billing module.' },
  ];
  const target = manager.policy.targetPct * window;
  let compactions = 0;
  let aboveTarget = 0;
  for (let call = 0; call < calls; call++) {
    history.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: `c${call}`, type: 'function', function: { name: 'read_file', arguments: `{"n":${call}}` } },
        ],
      },
      { role: 'tool', tool_call_id: `c${call}`, content: output(call, share * window) },
    );
    const result = await manager.compact('s', [...history]);
    if (result.applied) {
      compactions++;
      if (result.tokensAfter > target) aboveTarget++;
    }
  }
  await manager.shutdown();
  const absorbed = (manager.policy.triggerPct - manager.policy.targetPct) * window;
  return { window, share, calls, compactions, needed: (calls * perCall) / absorbed, aboveTarget };
}

/** The rows: outputs of 1%, 5%, 12%, 19% and 25% of each window. */
export async function rhythmBench(quick = false): Promise<RhythmRow[]> {
  const rows: RhythmRow[] = [];
  const windows = quick ? [8_000, 32_000] : [8_000, 32_000, 128_000, 1_000_000];
  for (const window of windows) {
    for (const share of [0.01, 0.05, 0.12, 0.19, 0.25]) {
      // Enough calls for several compactions; fewer at 1M, where each output is large.
      const calls =
        window >= 1_000_000 ? Math.min(60, Math.ceil(3 / share)) : Math.max(60, Math.ceil(6 / share));
      rows.push(await runRow(window, share, calls));
    }
  }
  return rows;
}

export function printRhythm(rows: readonly RhythmRow[]): void {
  console.log(
    '  window  output  calls  compactions/100  growth needs/100  ratio  above target  goals: ratio <= 1.2, above <= 10%',
  );
  for (const r of rows) {
    const ratio = r.needed > 0 ? r.compactions / r.needed : 0;
    const above = r.compactions > 0 ? r.aboveTarget / r.compactions : 0;
    console.log(
      `  ${String(r.window).padStart(7)}  ${`${(100 * r.share).toFixed(0)}%`.padStart(5)}  ${String(r.calls).padStart(5)}  ${((100 * r.compactions) / r.calls).toFixed(1).padStart(15)}  ${((100 * r.needed) / r.calls).toFixed(1).padStart(16)}  ${ratio.toFixed(2).padStart(5)}  ${`${(100 * above).toFixed(0)}%`.padStart(12)}  ${ratio <= 1.2 && above <= 0.1 ? 'met' : 'MISSED'}`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log('Compaction rhythm (bench/rhythm.ts):');
  printRhythm(await rhythmBench(process.argv.includes('--quick')));
}
