import { describe, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { DANGLING_CALL_RESULT } from '../../src/core/preflight/index/check-pairing.js';

const histories = {
  'openai-chat': [
    { role: 'user', content: 'List the files.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{}' } }],
    },
  ],
  'openai-responses': [
    { role: 'user', content: 'List the files.' },
    { type: 'function_call', call_id: 'call_1', name: 'ls', arguments: '{}' },
  ],
  anthropic: [
    { role: 'user', content: 'List the files.' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'ls', input: {} }] },
  ],
} as const;

describe('an unanswered tool call at the end of the request', () => {
  for (const [format, history] of Object.entries(histories)) {
    it(`${format}: invalid_messages naming the index by default`, async () => {
      const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8000 });
      await expect(
        manager.compact('s', history as readonly unknown[], { format: format as keyof typeof histories }),
      ).rejects.toMatchObject({
        code: 'invalid_messages',
        message: expect.stringMatching(/1.*call_1.*unanswered/s),
      });
      await manager.shutdown();
    });

    it(`${format}: a placeholder result with repairInput, the caller's array untouched`, async () => {
      const manager = new CompactManager({
        model: 'gpt-4o',
        maxContextTokens: 8000,
        policy: { repairInput: true },
      });
      const events: AnyCompactEvent[] = [];
      manager.on('compact.repair', (event) => events.push(event as AnyCompactEvent));
      const input = structuredClone(history as readonly unknown[]) as unknown[];
      const result = await manager.compact('s', input, { format: format as keyof typeof histories });
      expect(input).toEqual(history);
      expect(result.messages).toHaveLength(3);
      expect(JSON.stringify(result.messages[2])).toContain(DANGLING_CALL_RESULT);
      expect(JSON.stringify(result.messages[2])).toContain('call_1');
      expect(result.repairs).toEqual([{ kind: 'answered_dangling_call', index: 1, callId: 'call_1' }]);
      expect(events.map((e) => e.properties)).toEqual([
        { kind: 'answered_dangling_call', index: 1, callId: 'call_1' },
      ]);
      await manager.shutdown();
    });
  }

  it('a parallel round answered in part is caught too; a complete round passes', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8000 });
    const round = [
      { role: 'user', content: 'Read both.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'read', arguments: '{"p":"a"}' } },
          { id: 'b', type: 'function', function: { name: 'read', arguments: '{"p":"b"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'b', content: 'B' },
    ];
    await expect(manager.compact('p', round)).rejects.toMatchObject({ code: 'invalid_messages' });
    const done = [...round, { role: 'tool', tool_call_id: 'a', content: 'A' }];
    await expect(manager.compact('q', done)).resolves.toMatchObject({ applied: false });
    await manager.shutdown();
  });
});
