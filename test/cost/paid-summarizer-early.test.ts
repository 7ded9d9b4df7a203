import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { SummarizeRequest, Summarizer } from '../../src/core/summary/summarizer.js';
import { quarterCounter } from '../support/quarter-counter.js';
import { codingSessionHead, readFileRound } from '../support/read-file-session.js';

/**
 * Issue 47 point 3 with a summarizer of the caller's (an LLM, paid per call): the cost trigger
 * stays on, so a long tool-heavy session is as cheap as with the built-in summarizer (the cost
 * bench's default row at 128k: 0.87x the peer with the trigger off, 0.49x with it on), but
 * its early compactions only clear: every summarizer call comes from the ordinary trigger (on
 * a chat, where there is nothing to clear, at the very calls the trigger alone makes them).
 */

const WINDOW = 128_000;

/** A tool output of about `tokens` tokens (four characters each), distinct per call. */
const output = (call: number, tokens: number) =>
  `${call} `.repeat(Math.ceil((tokens * 4) / `${call} `.length));

async function run(costTrigger: boolean | undefined, chat: boolean) {
  const calls: number[] = [];
  let call = 0;
  const summarizer: Summarizer = {
    name: 'paid',
    async summarize(request: SummarizeRequest) {
      calls.push(call);
      return { text: `Summary of ${request.messages.length} messages. Never touch src/generated/.` };
    },
  };
  const manager = new CompactManager({
    model: 'claude-sonnet-4-5',
    maxContextTokens: WINDOW,
    tokenCounter: quarterCounter,
    summarizer,
    ...(costTrigger === undefined ? {} : { policy: { costTrigger } }),
  });
  const reasons: string[] = [];
  const summarized: string[] = [];
  let reason = '';
  manager.on('compact.trigger_decision', (event) => {
    if (event.properties.triggered) reason = event.properties.reason;
  });
  manager.on('compact.pruned_messages', () => reasons.push(reason));
  manager.on('compact.summary_created', () => summarized.push(reason));
  const history: Record<string, unknown>[] = codingSessionHead();
  for (call = 1; call <= 160; call++) {
    const size = 200 + ((call * 7919) % 2800);
    if (chat)
      history.push(
        { role: 'user', content: `Question ${call}: ${output(call, size / 2)}` },
        { role: 'assistant', content: `Answer ${call}: ${output(call, size / 2)}` },
      );
    else history.push(...readFileRound(call, output(call, size)));
    await manager.preflight('s', history);
  }
  await manager.shutdown();
  return { calls, reasons, summarized };
}

describe("the cost trigger with a summarizer of the caller's", () => {
  it('compacts early on a tool-heavy session, clearing only', async () => {
    const on = await run(undefined, false);
    // Early compactions happen (the trigger is on by default with this summarizer)...
    expect(on.reasons).toContain('growth paid a rewrite');
    // ...and none of them called the summarizer.
    expect(on.summarized.filter((reason) => reason === 'growth paid a rewrite')).toEqual([]);
    const off = await run(false, false);
    expect(off.reasons).not.toContain('growth paid a rewrite');
    expect(on.calls.length).toBeLessThanOrEqual(off.calls.length);
  });

  it('calls the summarizer where the trigger alone would on a chat (nothing to clear)', async () => {
    const on = await run(undefined, true);
    const off = await run(false, true);
    expect(off.calls.length).toBeGreaterThan(0);
    expect(on.calls).toEqual(off.calls);
  });
});
