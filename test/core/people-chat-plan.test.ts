/**
 * Issue 45 (facts over small talk): in a chat between people, compaction keeps none of the
 * user's lines verbatim for being the user's (what one person says to the other is no order
 * to the assistant), and the built-in summary fills the target past `maxSummaryTokens`. A
 * chat with an assistant keeps both rules as they were.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';

const PLACES = ['Lisbon', 'Oslo', 'Quito', 'Hanoi', 'Nairobi', 'Perth', 'Tromso', 'Cusco'];

/** A chat of `turns` messages; with `names`, each line opens with its speaker's name. */
function chat(turns: number, names: boolean): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let k = 0; k < turns; k++) {
    const user = k % 2 === 0;
    const place = PLACES[k % PLACES.length]!;
    const text = user
      ? `I visited ${place} in ${2000 + k} and bought a ${k}-page atlas there. Can't wait to go back!`
      : `My cousin moved to ${place} on day ${k}, she plays the cello ${k % 7} times a week.`;
    out.push({
      role: user ? 'user' : 'assistant',
      content: names ? `${user ? 'Ana' : 'Ben'}: ${text}` : text,
    });
  }
  return out;
}

async function lastRequest(names: boolean) {
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 4000,
    redaction: false,
    policy: { maxSummaryTokens: 200 },
  });
  const history: Record<string, unknown>[] = [];
  let last: Awaited<ReturnType<typeof manager.compact>> | undefined;
  let summaries = 0;
  for (const message of chat(240, names)) {
    history.push(message);
    last = await manager.compact('people', history);
    if (last.applied && last.summary) summaries++;
  }
  await manager.shutdown();
  const messages = last!.messages as { role: string; content: string }[];
  const at = messages.findIndex((m) => m.content.includes('<COMPACT-SUMMARY'));
  return { summaries, before: messages.slice(0, at), summary: last!.summary! };
}

describe('a chat between people', () => {
  it('keeps no user line verbatim before the summary, and the summary fills past maxSummaryTokens', async () => {
    const people = await lastRequest(true);
    expect(people.summaries).toBeGreaterThan(2);
    expect(people.before.filter((m) => m.role === 'user')).toEqual([]);
    expect(people.summary.tokens).toBeGreaterThan(300);
  });

  it('without named speakers keeps the user text share and maxSummaryTokens', async () => {
    const assistant = await lastRequest(false);
    expect(assistant.summaries).toBeGreaterThan(2);
    expect(assistant.before.filter((m) => m.role === 'user').length).toBeGreaterThan(0);
    expect(assistant.summary.tokens).toBeLessThan(300);
  });
});
