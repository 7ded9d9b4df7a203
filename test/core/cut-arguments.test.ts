/**
 * Issue 43 (found by test/integrations/sound-requests-property.test.ts): a tool call whose
 * arguments alone are too large for the window is cut by the last level; its arguments must
 * stay JSON (the Agents SDK, LangChain and the AI SDK parse them), cut inside their longest string.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';

const big = Array.from({ length: 700 }, (_, k) => `line ${k}: const value${k} = compute(${k});`).join('\n');

describe('cut of an oversized call', () => {
  it('keeps the arguments valid JSON, cut inside the longest string', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 4000 });
    const history = [
      { role: 'user', content: 'Write the file.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'write_file', arguments: JSON.stringify({ path: 'src/a.ts', content: big }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'written' },
    ];
    const result = await manager.compact('s', history);
    expect(result.levels.map((level) => level.level)).toContain('cut_oversized');
    const call = (result.messages[1] as (typeof history)[1]).tool_calls![0]!;
    const args = JSON.parse(call.function.arguments) as { path: string; content: string };
    expect(args.path).toBe('src/a.ts');
    expect(args.content).toContain('chars cut here');
    expect(big.startsWith(args.content.split('\n[agent-compaction')[0]!)).toBe(true);
    expect(result.messages.at(-1)).toEqual(history.at(-1));
  });
});
