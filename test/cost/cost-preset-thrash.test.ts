import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { PolicyPreset } from '../../src/core/policy.js';
import { MIN_FREE_SHARE } from '../../src/core/preflight/decide.js';
import { quarterCounter } from '../support/quarter-counter.js';
import { codingSessionHead, readFileRound } from '../support/read-file-session.js';

/**
 * Issue 47 point 3: the `cost` preset (and the default it derives from) never thrashes, at
 * every window from 4k to 1M. The session is the same shape at every window: 60 tool calls
 * whose outputs are 2.5% to 12.5% of the window (deterministic), a ticket to keep every 15
 * calls. Counts, not timings:
 *
 * - every automatic compaction frees at least the stated floor, a tenth of the window
 *   (`MIN_FREE_SHARE`), and ends below the trigger (`triggerPct` of the window);
 * - compactions at most 1.2x what the growth needs at that floor: the tokens appended after the
 *   first compaction over the floor, plus the first (the old preset, trigger 0.4 / target 0.2,
 *   compacted on 32 of 51 calls at 4k, some freeing 52-69 tokens, some ending above the trigger);
 * - beside them, the fewest compactions any strategy needs to stay under the budget (each
 *   leaving only the newest round), for the table.
 */

const WINDOWS = [4_000, 8_000, 32_000, 128_000, 1_000_000];
const CALLS = 60;

/** A tool output of `tokens` tokens (four characters each). */
const output = (call: number, tokens: number) =>
  `${call} `.repeat(Math.ceil((tokens * 4) / `${call} `.length));

interface Compaction {
  before: number;
  after: number;
  trigger: number;
  reason: string;
}

async function run(window: number, preset: PolicyPreset) {
  const manager = new CompactManager({
    model: 'claude-sonnet-4-5',
    maxContextTokens: window,
    tokenCounter: quarterCounter,
    policy: { preset },
  });
  const compactions: Compaction[] = [];
  let pending: { trigger: number; reason: string } | undefined;
  manager.on('compact.trigger_decision', (event) => {
    if (event.properties.triggered)
      pending = { trigger: event.properties.triggerTokens, reason: event.properties.reason };
  });
  manager.on('compact.pruned_messages', (event) => {
    compactions.push({
      before: event.properties.tokensBefore,
      after: event.properties.tokensAfter,
      trigger: pending?.trigger ?? Number.NaN,
      reason: pending?.reason ?? 'unknown',
    });
  });
  const history: Record<string, unknown>[] = codingSessionHead();
  const steps: number[] = [];
  let appendedAfterFirst = 0;
  for (let call = 1; call <= CALLS; call++) {
    const added: Record<string, unknown>[] = [];
    if (call % 15 === 0) added.push({ role: 'user', content: `Keep ticket BILL-${call} in mind.` });
    const share = 0.025 + ((call * 7919) % 100) / 1000;
    added.push(...readFileRound(call, output(call, Math.floor(window * share))));
    const tokens = added.reduce((sum, message) => sum + quarterCounter.countText(JSON.stringify(message)), 0);
    steps.push(tokens);
    if (compactions.length > 0) appendedAfterFirst += tokens;
    history.push(...added);
    await manager.preflight('s', history);
  }
  const budget = manager.budget;
  const triggerTokens = manager.triggerTokens;
  await manager.shutdown();
  // The fewest compactions that keep every request under the budget (each keeps the newest round).
  let forced = 0;
  let request = 0;
  for (const step of steps) {
    request += step;
    if (request > budget) {
      forced++;
      request = step;
    }
  }
  const floor = Math.floor(MIN_FREE_SHARE * window);
  const needed = 1 + Math.ceil(appendedAfterFirst / floor);
  return { compactions, forced, needed, floor, triggerTokens };
}

describe('the cost preset never thrashes (issue 47 point 3)', () => {
  for (const preset of ['cost', 'default'] as const) {
    it(`'${preset}' at 4k, 8k, 32k, 128k and 1M: each compaction frees the floor and ends under its trigger; at most 1.2x the compactions growth needs`, async () => {
      const table: string[] = [];
      for (const window of WINDOWS) {
        const { compactions, forced, needed, floor, triggerTokens } = await run(window, preset);
        const leastFreed = Math.min(...compactions.map((c) => c.before - c.after));
        const mostAfter = Math.max(...compactions.map((c) => c.after / triggerTokens));
        table.push(
          `${String(window).padStart(9)} | ${String(compactions.length).padStart(11)} / ${CALLS} | needed ${String(needed).padStart(3)} | budget-forced ${String(forced).padStart(3)} | least freed ${leastFreed} (floor ${floor}) | most after ${(100 * mostAfter).toFixed(0)}% of the trigger`,
        );
        expect(compactions.length, `${window}: a session this long compacts`).toBeGreaterThan(0);
        expect(compactions.length, `${window}: compactions vs needed`).toBeLessThanOrEqual(1.2 * needed);
        for (const c of compactions) {
          expect(
            c.before - c.after,
            `${window}: a compaction (${c.reason}) freed too little`,
          ).toBeGreaterThanOrEqual(floor);
          expect(c.after, `${window}: a compaction (${c.reason}) ended above the trigger`).toBeLessThan(
            triggerTokens,
          );
        }
      }
      console.log(`'${preset}': window | compactions / calls | ...\n${table.join('\n')}`);
    });
  }
});
