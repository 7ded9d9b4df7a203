/**
 * The view fills its budget (issue 35): after a compaction that folds history, the request
 * uses at least 90% of its target, verbatim recent turns first, then summary lines. Before,
 * a large tool result just before the kept turns was folded whole and the summary stayed at
 * `maxSummaryTokens`: requests at 30-60% of the target in 8k agent sessions.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { quarterCounter } from '../support/quarter-counter.js';

const WORDS = 'invoice ledger tenant refund region cluster deploy shard replica quota'.split(' ');

/** A deterministic tool output of about `tokens` tokens, in lines. */
function output(seed: number, tokens: number): string {
  let x = seed * 2654435761;
  const lines: string[] = [];
  let chars = 0;
  while (chars < tokens * 4) {
    const words: string[] = [];
    for (let k = 0; k < 9; k++) {
      x = (x * 1103515245 + 12345) >>> 0;
      words.push(`${WORDS[x % WORDS.length]}${x % 997}`);
    }
    const line = words.join(' ');
    lines.push(line);
    chars += line.length + 1;
  }
  return lines.join('\n');
}

describe('the view fills its budget', () => {
  it('uses at least 90% of the target after every compaction that folds history (8k window, default policy)', async () => {
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 8_000,
      redaction: false,
      tokenCounter: quarterCounter,
    });
    let target = 0;
    manager.on('compact.trigger_decision', (event) => {
      target = event.properties.targetTokens ?? 0;
    });
    const history: Record<string, unknown>[] = [
      { role: 'system', content: 'You are a coding agent with file and shell tools.' },
      { role: 'user', content: 'Find why the ledger totals drift for tenant T-4411 and fix it.' },
    ];
    const uses: number[] = [];
    for (let call = 1; call <= 80; call++) {
      // Every fourth call the user writes again, with context pasted in.
      if (call % 4 === 0)
        history.push({
          role: 'user',
          content: `Here is more context for step ${call}:\n${output(call + 500, 400)}`,
        });
      const result = await manager.compact('s', history);
      if (result.applied && result.levels.some((level) => level.level === 'summarize'))
        uses.push(result.tokensAfter / target);
      history.push({
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: `call_${call}`,
            type: 'function',
            function: { name: 'read_file', arguments: JSON.stringify({ path: `src/ledger/part${call}.ts` }) },
          },
        ],
      });
      // Outputs of 150 to 3,400 tokens: some too large to stay verbatim beside the latest turn.
      history.push({
        role: 'tool',
        tool_call_id: `call_${call}`,
        content: output(call, 150 + ((call * 7919) % 3251)),
      });
    }
    expect(uses.length).toBeGreaterThan(5);
    expect(Math.min(...uses)).toBeGreaterThanOrEqual(0.9);
  });
});
