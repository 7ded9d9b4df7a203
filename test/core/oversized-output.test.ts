/**
 * A tool output larger than the whole window (a 200 KB log as the latest message, in an
 * 8,000-token window): the preflight succeeds with the output cut head and tail around a
 * marker naming a reference, and the archive holds the full text under that reference.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { memoryStorage } from '../../src/index.js';

function agentTurns(turns: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Find why the nightly build fails and fix it.' },
  ];
  for (let t = 0; t < turns; t++) {
    out.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_0', type: 'function', function: { name: 'bash', arguments: `{"cmd":"step ${t}"}` } },
      ],
    });
    out.push({ role: 'tool', tool_call_id: 'call_0', content: `output of step ${t}: ${'ok '.repeat(150)}` });
  }
  return out;
}

describe('a tool output bigger than the window', () => {
  it('cuts a 200 KB latest tool output in an 8k window and archives the whole', async () => {
    const storage = memoryStorage();
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000, storage });
    const lines = Array.from(
      { length: 4_600 },
      (_, i) => `line ${i}: build step ${i} finished in ${i % 97} ms`,
    );
    const log = `BEGIN-LOG\n${lines.join('\n')}\nERROR: linker failed at line 4599\nEND-LOG`;
    expect(log.length).toBeGreaterThan(200_000);
    const history = [
      ...agentTurns(6),
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'bash', arguments: '{"cmd":"make"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', content: log },
    ];
    const result = await manager.compact('big', history);
    await manager.flush();
    expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
    expect(manager.estimate(result.messages).total).toBeLessThanOrEqual(manager.budget);
    const last = result.messages.at(-1) as { role: string; tool_call_id: string; content: string };
    expect(last).toMatchObject({ role: 'tool', tool_call_id: 'call_0' });
    // Head and tail survive: the start of the log and the error at its end.
    expect(last.content.startsWith('BEGIN-LOG')).toBe(true);
    expect(last.content).toContain('ERROR: linker failed');
    const ref = /chars cut here; full text: recall ref "([a-z]+-[0-9a-z]+)"/.exec(last.content)?.[1];
    expect(ref).toBeDefined();
    expect(result.levels.map((level) => level.level)).toContain('cut_oversized');
    const archived = await storage.loadArtifact('big', ref!);
    expect(archived?.text).toContain('line 2000: build step 2000');
    expect(archived?.text.length).toBeGreaterThanOrEqual(log.length - 100);
    // Its call stays right before it.
    const call = result.messages.at(-2) as { tool_calls: { id: string }[] };
    expect(call.tool_calls[0]!.id).toBe('call_0');
  });
});
