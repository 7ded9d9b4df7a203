/**
 * Issue 47 point 5: a warm call reads a bounded number of the caller's messages, whatever the
 * history's length (the newest ones, the sampled probes, the rotating audit's slice): a call
 * that read the whole history would make a session quadratic. Counted, not timed: the history
 * is handed over through a Proxy that counts the reads of its elements.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/index.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';

const SIZE = 12_000;
const CALLS = 24;

/** A coding session with tool rounds, about `count` messages, ending on a user message. */
function toolSession(count: number): unknown[] {
  const messages: unknown[] = [];
  for (let part = 0; messages.length < count; part++) {
    const chunk = syntheticSession({ turns: 200, seed: 5 + part, toolDensity: 3, resultChars: 120 });
    messages.push(
      ...(part === 0 ? chunk : chunk.filter((m) => m.role !== 'system' && m.role !== 'developer')),
    );
  }
  let end = count;
  while (end > 1 && (messages[end] as { role?: string }).role !== 'user') end--;
  return messages.slice(0, end);
}

/** A plain `{ role, content }` chat (no message tells the format). */
const plainChat = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `message ${i}: the deploy of service s${i % 41} waits on ticket T-${i % 211}`,
  }));

/** Reads of `history`'s elements per warm call, one message appended per call, back to back. */
async function readsPerCall(history: unknown[]): Promise<number> {
  let reads = 0;
  let counting = false;
  const given = new Proxy(history, {
    get(target, key, receiver) {
      if (counting && typeof key === 'string' && key >= '0' && key <= '9') reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 2_000_000_000 });
  await manager.compact('reads', given);
  counting = true;
  for (let k = 0; k < CALLS; k++) {
    history.push({ role: 'user', content: `follow-up ${k}: run the tests again` });
    const out = (await manager.preflight('reads', given)) as unknown[];
    expect(out.length).toBe(history.length);
  }
  counting = false;
  await manager.shutdown();
  return reads / CALLS;
}

describe('warm calls read a bounded part of the history', () => {
  it.each([
    ['a tool session', toolSession],
    ['a plain chat', plainChat],
  ])('%s: far fewer reads per call than messages', async (_, make) => {
    const perCall = await readsPerCall(make(SIZE));
    // The newest 8, the recent 32, 8 probes, and the audit's 768 per call (index-request.ts),
    // a few times over between the index, the view and the answer: never the whole history.
    expect(perCall).toBeLessThan(SIZE / 4);
  });
});
