/**
 * The warm path trusts message identity and looks for in-place edits in the newest messages
 * on every call and in a rotating slice of older ones: a recent edit is seen at once, an old
 * one within a few calls (messages should be treated as immutable once sent).
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';

function chat(n: number): { role: string; content: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `message ${i}`,
  }));
}

describe('in-place edits on the warm path', () => {
  it('sees an edit of a recent message on the next call', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
    const history = chat(3_000);
    await manager.preflight('s', history);
    history[2_990]!.content = 'edited recently';
    const out = (await manager.preflight('s', history)) as { content: string }[];
    expect(out[2_990]!.content).toBe('edited recently');
  });

  it('sees an edit of an old message within a full audit rotation', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
    const history = chat(3_000);
    await manager.preflight('s', history);
    history[10]!.content = 'edited long ago';
    let seenAfter = -1;
    for (let call = 1; call <= 5 && seenAfter < 0; call++) {
      history.push({ role: 'user', content: `more ${call}` });
      const out = (await manager.preflight('s', history)) as { content: string }[];
      if (out[10]!.content === 'edited long ago') seenAfter = call;
    }
    expect(seenAfter).toBeGreaterThan(0);
    expect(seenAfter).toBeLessThanOrEqual(4);
  });
});
