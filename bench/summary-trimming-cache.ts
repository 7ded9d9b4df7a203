/**
 * `npx tsx bench/summary-trimming-cache.ts [sourceRootWithoutTrimming]`: what the summary
 * giving up lines for the newest message (trim-summary-lines.ts) costs under prompt caching.
 *
 * A carried summary (one this call did not rewrite) that gives up lines breaks the cached
 * prefix at the summary: everything after it is written again. A summary this call rewrote
 * breaks it there anyway. The bench runs the session of bench/cache-cost.ts (outputs of 200 to
 * 3,000 tokens, a ticket every 40 calls) through a manager with the built-in summarizer and
 * counts, per window and system-prompt share: the requests, those whose summary gave up lines
 * (carried or fresh), the newest messages cut, the cache-hit share and the billed-equivalent
 * input (Anthropic multipliers: reads 0.1x, writes 1.25x; characters / 4 for every count).
 *
 * With an argument, the same runs against a copy of `src/` whose cut-oversized.ts never lets
 * the summary give up lines (the newest is cut instead), alternated row by row: the figures are
 * counts (deterministic), the comparison is trimming against no trimming.
 */
import { PrefixCacheTally } from '../src/core/counting/prefix-cache.js';
import type { CompactManager as Manager } from '../src/core/manager/compact-manager.js';
import { buildSession, messageTokens, PRICES, quarterCounter } from './cache-cost.js';

type Message = Record<string, unknown>;
const CALLS = Number(process.env.TRIM_CALLS ?? 240);
const WINDOWS = [8_000, 16_000, 32_000];
const SYSTEM_SHARES = [0.1, 0.3, 0.5, 0.65];

interface Row {
  variant: string;
  window: number;
  system: string;
  requests: number;
  compactions: number;
  trimmedCarried: number;
  trimmedFresh: number;
  newestCut: number;
  hitShare: string;
  billedInput: number;
}

/** A system prompt of about `tokens` tokens (characters / 4). */
function systemPrompt(tokens: number): string {
  let text = 'You are a coding agent with file and shell tools.';
  for (let k = 0; text.length < tokens * 4; k++) text += ` Rule ${k}: keep the house style.`;
  return text;
}

/**
 * The shape of test/core/newest-beside-summary.test.ts (a coding agent at 8k through the proxy):
 * one file read per call, each result 35 lines of about 420 tokens.
 */
function readSession(calls: number): { steps: Message[][] } {
  const steps: Message[][] = [];
  for (let n = 1; n <= calls; n++) {
    const note = Array.from(
      { length: 35 },
      (_, i) => `note ${n} line ${i}: the value ${n * 100 + i} is kept`,
    );
    steps.push([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: `read_${n}`,
            type: 'function',
            function: {
              name: 'read_file',
              arguments: JSON.stringify({ file_path: `/home/u/note-${n}.txt` }),
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: `read_${n}`, content: note.join('\n') },
    ]);
  }
  return { steps };
}

async function run(
  CompactManager: typeof Manager,
  variant: string,
  window: number,
  share: number,
  reads = false,
): Promise<Row> {
  const session = reads ? readSession(CALLS) : buildSession(CALLS);
  const system = systemPrompt(window * share);
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: window,
    tokenCounter: quarterCounter,
  });
  const tally = new PrefixCacheTally(
    { cacheRead: PRICES.anthropic.read, cacheWrite: PRICES.anthropic.write, output: PRICES.anthropic.output },
    (message) => messageTokens(message as Message),
  );
  const row: Row = {
    variant,
    window,
    system: `${Math.round(share * 100)}%${reads ? ' (reads)' : ''}`,
    requests: 0,
    compactions: 0,
    trimmedCarried: 0,
    trimmedFresh: 0,
    newestCut: 0,
    hitShare: '',
    billedInput: 0,
  };
  const history: Message[] = [
    { role: 'user', content: 'Refactor the billing module to the new invoice API.' },
  ];
  let input = 0;
  let cached = 0;
  let billed = 0;
  for (const step of session.steps) {
    history.push(...step);
    const result = await manager.compact('bench', history, { system });
    const sent = [{ role: 'system', content: system }, ...(result.messages as Message[])];
    const { prefix, total } = tally.add(sent);
    input += total;
    cached += prefix;
    billed += prefix * PRICES.anthropic.read + (total - prefix) * PRICES.anthropic.write;
    row.requests++;
    if (result.applied) row.compactions++;
    const cut = result.levels.find((level) => level.level === 'cut_oversized');
    if ((cut?.summaryLinesGivenUp ?? 0) > 0) {
      if (result.levels.some((level) => level.level === 'summarize')) row.trimmedFresh++;
      else row.trimmedCarried++;
    }
    if (JSON.stringify(result.messages.at(-1)) !== JSON.stringify(history.at(-1))) row.newestCut++;
  }
  await manager.shutdown();
  row.hitShare = `${((100 * cached) / input).toFixed(1)}%`;
  row.billedInput = Math.round(billed);
  return row;
}

const withoutTrimming = process.argv[2];
const current = (await import('../src/core/manager/compact-manager.js')).CompactManager;
const old = withoutTrimming
  ? (
      (await import(`${withoutTrimming}/src/core/manager/compact-manager.js`)) as {
        CompactManager: typeof Manager;
      }
    ).CompactManager
  : undefined;
const rows: Row[] = [];
// TRIM_READS_ONLY=1: only the reads rows below.
for (const window of process.env.TRIM_READS_ONLY ? [] : WINDOWS)
  for (const share of SYSTEM_SHARES) {
    rows.push(await run(current, 'trimming', window, share));
    if (old) rows.push(await run(old, 'no trimming', window, share));
  }
// The shape the trimming was made for: a system prompt of 74% of an 8k window, reads of ~420 tokens.
for (const share of [0.6, 0.7, 0.74]) {
  rows.push(await run(current, 'trimming', 8_000, share, true));
  if (old) rows.push(await run(old, 'no trimming', 8_000, share, true));
}
console.log(`summary trimming under prompt caching (${CALLS} calls, Anthropic multipliers):`);
console.table(rows);
