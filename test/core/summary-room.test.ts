/**
 * The room a rolling summary gets (issue 20): never less than its previous version while older
 * tool rounds can be folded instead, and never at the cost of the latest turn beyond half the
 * target (a review found a 3.6k-token log cut to 288 characters to keep a summary larger than
 * the target).
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { seededRandom } from '../../src/testing/synthetic-session.js';

const WORDS =
  'alpha beta gamma delta order shipment invoice customer ticket refund status pending region cluster deploy node'.split(
    ' ',
  );

function session(turns: number) {
  const rand = seededRandom(7);
  const para = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
  const messages: Record<string, unknown>[] = [{ role: 'system', content: 'You are a support agent.' }];
  const calls: number[] = [];
  for (let i = 0; i < turns; i++) {
    const id = `call_${i}`;
    messages.push({ role: 'user', content: `Step ${i}: check ticket TCK-${1000 + i}. ${para(20)}` });
    calls.push(messages.length);
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id,
          type: 'function',
          function: { name: 'get_ticket', arguments: `{"ticket_id":"TCK-${1000 + i}"}` },
        },
      ],
    });
    messages.push({
      role: 'tool',
      tool_call_id: id,
      content: JSON.stringify({ owner: `usr_${9000 + i}`, body: para(200) }),
    });
    calls.push(messages.length);
    messages.push({ role: 'assistant', content: `TCK-${1000 + i} is owned by usr_${9000 + i}. ${para(15)}` });
  }
  const log = `LOGSTART ${para(3_600)} LOGEND`;
  return { messages, calls, log };
}

describe('the summary room', () => {
  it('keeps the previous size by folding older rounds, and cuts the latest turn for at most half the target', async () => {
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 8_000,
      redaction: false,
      policy: { maxSummaryTokens: 4_000, hardCapBuffer: 300 },
    });
    const { messages, calls, log } = session(60);
    const sizes: number[] = [];
    for (const end of calls) {
      const result = await manager.compact('s', messages.slice(0, end));
      if (result.applied && result.summary) sizes.push(result.summary.tokens);
    }
    expect(sizes.length).toBeGreaterThan(3);
    // Rolling: no version shrinks below the one before it (the rounds are alike).
    for (let k = 1; k < sizes.length; k++) expect(sizes[k]!).toBeGreaterThanOrEqual(0.9 * sizes[k - 1]!);
    const big = [
      ...messages,
      { role: 'user', content: 'Now analyze the full log.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c_big', type: 'function', function: { name: 'read_log', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c_big', content: log },
    ];
    // The window holds the log: it is not cut for the summary's sake.
    const roomy = await manager.compact('s', big);
    expect(JSON.stringify(roomy.messages.at(-1))).toContain('LOGEND');
    expect(roomy.levels.some((level) => level.level === 'cut_oversized')).toBe(false);
    // A smaller per-call window (overflow recovery): the log is cut, but the summary keeps no
    // more than half the target beyond its share.
    const small = await manager.compact('s', big, {
      force: true,
      maxContextTokens: 4_000,
      policy: { hardCapBuffer: 400 },
    });
    expect(small.tokensAfter).toBeLessThanOrEqual(3_600);
    expect(small.summary!.tokens).toBeLessThanOrEqual(2_000 / 2 + 40);
    const kept = JSON.stringify(small.messages.at(-1)).length;
    expect(kept).toBeGreaterThan(0.4 * log.length);
    await manager.shutdown();
  });
});
