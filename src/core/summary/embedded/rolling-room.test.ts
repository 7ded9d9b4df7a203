/**
 * Rolling compaction with the built-in summarizer (issue 45 point 4): each round's room is the
 * previous summary's size, as the preflight planner gives it, so the room a round leaves
 * unused, and the room noise takes, are lost for good.
 */
import { describe, expect, it } from 'vitest';
import { messageList } from '../../../../test/support/compact-messages.js';
import { unitMaker } from '../../../../test/support/summary-units.js';
import { tokenCounterFor } from '../../counting/token-counter.js';
import { EmbeddedSummarizer } from './index.js';
import { scoreUnits, wordWeight } from './score-units.js';
import type { Unit } from './types.js';

const counter = tokenCounterFor('gpt-4o');
const countTokens = (text: string) => counter.countText(text);
const summarizer = new EmbeddedSummarizer();
const run = (messages: ReturnType<typeof messageList>['messages'], maxTokens: number) =>
  summarizer.summarizeSync({ strategy: 'task_state', messages, maxTokens, countTokens });

describe('the room a summary leaves', () => {
  it("is filled in an agent's run with the units that still fit, checked on the rendered count", () => {
    const list = messageList();
    list.calls([{ id: 'c', name: 'read_file', arguments: '{"path":"docs/limits.md"}' }]);
    list.result({ callId: 'c', output: 'Limits are listed per worker.' });
    const words = ['ledger', 'invoice', 'refund', 'quota', 'webhook', 'export', 'tenant', 'cursor'];
    for (let k = 0; k < 40; k++) {
      const w = words[k % words.length]!;
      const v = words[(k * 5 + 3) % words.length]!;
      list.user(
        k % 2
          ? `The ${w} limit is ${100 + k * 7} ms.`
          : `We keep the ${w} ${v} path behind flag f${k} until the audit of batch ${k} is signed off by the ${v} team.`,
      );
      list.assistant(
        k % 3
          ? `Noted ${w} ${k}.`
          : `I checked the ${v} handler ${k}; it retries ${(k % 5) + 2} times before the ${w} alarm fires.`,
      );
    }
    for (let maxTokens = 150; maxTokens <= 450; maxTokens += 15) {
      const used = countTokens(run(list.messages, maxTokens));
      expect(used).toBeLessThanOrEqual(maxTokens);
      // The fitting alone stopped 10 tokens short at 195 (a unit's estimate misses its line).
      expect(maxTokens - used, `max ${maxTokens}`).toBeLessThanOrEqual(9);
    }
  });
});

describe('noise that is rare by chance', () => {
  it("a timestamp's pieces count as numbers: a log line does not outrank a stated limit", () => {
    expect(wordWeight('2025-03-24t17')).toBeLessThan(1);
    expect(wordWeight('12z')).toBeLessThan(1);
    const unit = unitMaker();
    const tool = { stateChanging: false, failed: false, scratch: false, superseded: false };
    const logs = Array.from({ length: 6 }, (_, k) =>
      unit(
        `bash(tail -n 40 logs/app.log) → 2025-03-2${k}T1${k}:3${k}:1${k}Z info request started worker=${k}`,
        { speaker: 'bash', source: 'tool', tool },
      ),
    );
    const limit = unit('The export worker is capped at 1081 MiB of memory per pod.');
    scoreUnits([limit, ...logs], { agentic: true });
    const perToken = (u: Unit) => u.value / countTokens(u.text);
    for (const log of logs) expect(perToken(limit), log.text).toBeGreaterThan(perToken(log));
  });

  it('a position in a file (a grep hit) is no key identifier; an id a result reveals still is', () => {
    const list = messageList();
    list.user('Find where the tenant is suspended and fix the pool shutdown.');
    list.calls([{ id: 'g', name: 'grep', arguments: '{"pattern":"getPool","path":"src"}' }]);
    list.result({ callId: 'g', output: 'src/db/pool.ts:124:  await getPool(options)' });
    list.calls([{ id: 'p', name: 'psql', arguments: '{"query":"select id from tenants"}' }]);
    list.result({ callId: 'p', output: ' 62771eac-1b3b-41ca-ae70-210de37e5ca0 | suspended' });
    const teams = ['ledger', 'refund', 'quota', 'export', 'webhook', 'tax'];
    teams.forEach((team, k) => {
      list.user(`The ${team} worker is capped at ${300 + k * 17} MiB of memory per pod.`);
    });
    const keysOf = (text: string) =>
      text.split('## Key entities and identifiers')[1]?.split('\n## ')[0] ?? '';
    // Listed once, a grep hit was carried by every later version (at 52 and 58 tokens it was).
    for (let maxTokens = 40; maxTokens <= 220; maxTokens += 6)
      expect(keysOf(run(list.messages, maxTokens)), `max ${maxTokens}`).not.toMatch(/:\d+$/m);
    expect(keysOf(run(list.messages, 120))).toContain('62771eac-1b3b-41ca-ae70-210de37e5ca0');
  });
});
