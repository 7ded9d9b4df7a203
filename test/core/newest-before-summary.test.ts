/**
 * The newest message goes whole when a shorter summary makes room for it: in a window that a
 * long system prompt mostly fills (an agent CLI's prompt and tool schemas), the last resort
 * shortens the summary before it cuts the newest message; a newest message too large even
 * then is still cut, the summary kept whole.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';

const SYSTEM = `You are a coding agent. ${Array.from({ length: 600 }, (_, i) => `Rule ${i}: follow the house style.`).join(' ')}`;

function note(n: number): string {
  return Array.from({ length: 60 }, (_, i) => `note ${n} line ${i}: the value ${n * 100 + i} is kept`).join(
    '\n',
  );
}

/** Write then read back `count` notes, one tool round each, the read result last. */
function rounds(count: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'Write ten notes, then read each back and tell me they are all there.' },
  ];
  for (let n = 1; n <= count; n++) {
    out.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `read_${n}`,
          type: 'function',
          function: { name: 'read_file', arguments: JSON.stringify({ file_path: `/home/u/note-${n}.txt` }) },
        },
      ],
    });
    out.push({ role: 'tool', tool_call_id: `read_${n}`, content: note(n) });
  }
  return out;
}

describe('the newest message against the summary', () => {
  it('sends every newest read whole when a shorter summary makes room', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    let compacted = 0;
    for (let n = 1; n <= 14; n++) {
      const history = rounds(n);
      const result = await manager.compact('notes', history);
      expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
      if (result.applied) compacted++;
      const last = result.messages.at(-1) as { content: string };
      expect(last.content, `call ${n}`).toBe(note(n));
    }
    await manager.shutdown();
    expect(compacted).toBeGreaterThan(1);
  });

  it('still cuts a newest message too large even beside a one-line summary, the summary kept whole', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    for (let n = 1; n <= 6; n++) await manager.compact('huge', rounds(n));
    const history = rounds(6);
    const huge = Array.from({ length: 900 }, (_, i) => `log line ${i}: step ${i} passed`).join('\n');
    (history.at(-1) as { content: string }).content = huge;
    const result = await manager.compact('huge', history);
    await manager.shutdown();
    expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
    const last = result.messages.at(-1) as { content: string };
    expect(last.content).not.toBe(huge);
    expect(last.content).toMatch(/cut here/);
    expect(result.summary?.text.split('\n').length).toBeGreaterThan(3);
  });
});
