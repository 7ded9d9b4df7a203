import { describe, expect, it } from 'vitest';
import { chatTurns } from '../../../test/support/manager-fixtures.js';
import { CompactError, isCompactError } from '../errors.js';
import { CompactManager } from './compact-manager.js';

describe('bad input', () => {
  const manager = new CompactManager({ maxContextTokens: 10_000 });
  it.each<[unknown[], RegExp]>([
    [[{ content: 'x' }], /messages\[0\]\.role/],
    [
      [
        { role: 'user', content: 'x' },
        { role: 'tool', tool_call_id: 'nope', content: 'r' },
      ],
      /messages\[1\].*orphan/,
    ],
    [[{ role: 'user', content: { text: 1 } }], /messages\[0\]\.content/],
    [[null], /messages\[0\]: must be an object/],
  ])('rejects %j', async (messages, pattern) => {
    await expect(manager.preflight('s', messages)).rejects.toSatisfy(
      (e: unknown) => isCompactError(e, 'invalid_messages') && pattern.test((e as Error).message),
    );
  });

  it('rejects a bad session id, format and config', async () => {
    await expect(manager.preflight('', [])).rejects.toThrow(CompactError);
    await expect(manager.preflight('s', [], { format: 'xml' as never })).rejects.toThrow(/format/);
    expect(() => new CompactManager({ maxContextTokens: Number.NaN })).toThrow(/maxContextTokens/);
    expect(() => new CompactManager({ maxContextTokens: -5 })).toThrow(/maxContextTokens/);
    expect(() => new CompactManager({ policy: { triggerPct: 1.5 } })).toThrow(
      /policy.triggerPct must be between 0 and 1/,
    );
    expect(() => new CompactManager({ policy: { keepRecentTurns: 0 } })).toThrow(/policy.keepRecentTurns/);
    expect(() => new CompactManager({ policy: { strategy: 'poem' } })).toThrow(/policy.strategy/);
    expect(() => new CompactManager({ policy: { bogus: 1 } as never })).toThrow(/policy.bogus/);
    expect(() => new CompactManager({ maxContextTokens: 1000, policy: { hardCapBuffer: 1000 } })).toThrow(
      /hardCapBuffer/,
    );
    expect(() => new CompactManager({ summarizerTimeoutMs: 0 })).toThrow(/summarizerTimeoutMs/);
    expect(() => new CompactManager({ model: '' })).toThrow(/model/);
    expect(
      new CompactManager({ customStrategies: ['poem'], policy: { strategy: 'poem' } }).policy.strategy,
    ).toBe('poem');
  });
});

describe('formats end to end', () => {
  it('compacts Anthropic messages with the system prompt apart and a user-role summary', async () => {
    const manager = new CompactManager({
      model: 'claude-sonnet-4-5',
      maxContextTokens: 200_000,
      policy: { userTextShare: 0, keepRecentTurns: 1, keepToolIoPairs: 1 },
    });
    const messages: Record<string, unknown>[] = [];
    for (let i = 0; i < 6; i++) {
      messages.push({ role: 'user', content: `Question ${i} about src/module${i}.ts` });
      messages.push({
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: `tu${i}`, name: 'read', input: { path: `src/module${i}.ts` } },
        ],
      });
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `tu${i}`, content: `export const v${i} = ${i};` }],
      });
      messages.push({ role: 'assistant', content: `Module ${i} exports v${i}.` });
    }
    const result = await manager.manualCompact('a', messages, { system: 'You are Orion.' });
    const out = result.messages as { role: string; content: unknown }[];
    expect(out[0]!.role).toBe('user');
    expect(String(out[0]!.content)).toMatch(/^<COMPACT-SUMMARY v1>/);
    expect(String(out[0]!.content)).toContain('src/module0.ts');
    expect(out.slice(1)).toEqual(messages.slice(-4));
    expect(result.format).toBe('anthropic');
  });

  it('keeps Responses reasoning with its call and unknown items intact', async () => {
    const manager = new CompactManager({
      maxContextTokens: 100_000,
      policy: { userTextShare: 0, keepRecentTurns: 1, keepToolIoPairs: 1 },
    });
    const items: Record<string, unknown>[] = [{ type: 'message', role: 'developer', content: 'be careful' }];
    for (let i = 0; i < 5; i++) {
      items.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `task ${i}` }] });
      items.push({ type: 'reasoning', id: `rs_${i}`, summary: [] });
      items.push({ type: 'function_call', call_id: `c${i}`, name: 'run', arguments: '{}' });
      items.push({ type: 'function_call_output', call_id: `c${i}`, output: `ok ${i}` });
      items.push({ type: 'web_search_call', id: `ws_${i}`, status: 'completed' });
    }
    const result = await manager.manualCompact('r', items);
    const out = result.messages as Record<string, unknown>[];
    expect(out[0]).toEqual(items[0]);
    expect(out[1]).toMatchObject({ type: 'message', role: 'assistant' });
    const tail = out.slice(2);
    const reasoningIndex = tail.findIndex((i) => i.type === 'reasoning');
    expect(tail[reasoningIndex + 1]).toMatchObject({ type: 'function_call', call_id: 'c4' });
    expect(tail).toContainEqual({ type: 'function_call_output', call_id: 'c4', output: 'ok 4' });
    expect(tail).toContainEqual({ type: 'web_search_call', id: 'ws_4', status: 'completed' });
  });
});

describe('listeners', () => {
  it('isolates a throwing listener and can unsubscribe', async () => {
    const manager = new CompactManager({ maxContextTokens: 10_000 });
    const seen: string[] = [];
    manager.on('compact.token_estimate', () => {
      throw new Error('listener bug');
    });
    const off = manager.on('compact.trigger_decision', (e) => seen.push(e.name));
    await manager.preflight('s', chatTurns(1));
    off();
    await manager.preflight('s', chatTurns(1));
    expect(seen).toEqual(['compact.trigger_decision']);
    await manager.shutdown();
  });
});
