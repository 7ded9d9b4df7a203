/**
 * Issue 38 point 2: on long histories a warm call's copy and audit are made after the call,
 * in a turn of the event loop of their own (result-copy.ts, index-request.ts). What the
 * caller gets must not change: a fresh array per call that it may mutate, the history as
 * given, and an old message edited in place found within the audit's bounded number of calls.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/index.js';

const SIZE = 20_000;
const turn = () => new Promise((resolve) => setImmediate(resolve));
const message = (i: number) => ({
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: `message ${i}: the build on branch b${i % 97} needs the flag --mode=${i % 13}`,
});

describe('warm calls on a long history', () => {
  it('returns a fresh array each call that the caller owns, holding the history as given', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 100_000_000 });
    const history = Array.from({ length: SIZE }, (_, i) => message(i));
    await manager.compact('long', history);
    const returned = new Set<unknown[]>();
    for (let k = 0; k < 6; k++) {
      history.push(message(SIZE + k));
      const out = (await manager.preflight('long', history)) as unknown[];
      expect(out).not.toBe(history);
      expect(returned.has(out)).toBe(false);
      returned.add(out);
      expect(out.length).toBe(history.length);
      for (const i of [0, 1, SIZE >> 1, history.length - 2, history.length - 1])
        expect(out[i]).toBe(history[i]);
      // The caller's own: mutating it changes nothing of the next call.
      out.push({ role: 'user', content: 'pushed by the caller' });
      out[0] = { role: 'user', content: 'replaced by the caller' };
      out.length = 10;
      if (k % 2 === 0) await turn();
    }
    const last = (await manager.preflight('long', history)) as unknown[];
    expect(last.length).toBe(history.length);
    expect(last[0]).toBe(history[0]);
    expect(last.at(-1)).toBe(history.at(-1));
    expect(JSON.stringify(last)).not.toContain('by the caller');
    await manager.shutdown();
  });

  it('finds an old message edited in place while the audit runs between calls', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 100_000_000 });
    const history = Array.from({ length: SIZE }, (_, i) => message(i));
    await manager.compact('edit', history);
    await turn();
    (history[7_771] as { content: string }).content = 'EDITED IN PLACE: use port 7443';
    // Every old message is audited again within SIZE / 768 calls (index-request.ts).
    const bound = Math.ceil(SIZE / 768) + 2;
    // The count the edit gives, from a manager that never saw the old text.
    const fresh = new CompactManager({ model: 'gpt-4o', maxContextTokens: 100_000_000 });
    const truth = async () => (await fresh.compact('edit', [...history])).tokensBefore;
    let seenAt = -1;
    for (let k = 0; k < bound && seenAt < 0; k++) {
      history.push(message(SIZE + k));
      const result = await manager.compact('edit', history);
      if (result.tokensBefore === (await truth())) seenAt = k;
      // The model call: a turn of the loop, where the audit runs.
      await turn();
    }
    expect(seenAt).toBeGreaterThanOrEqual(0);
    await Promise.all([manager.shutdown(), fresh.shutdown()]);
  });
});
