import { describe, expect, it } from 'vitest';
import { BpeTokenCounter } from '../../counting/token-counter.js';
import { openaiChatCodec } from '../../messages/formats/openai-chat.js';
import { MessageIndex } from '../../messages/message-index.js';
import { ToolPairer } from '../../messages/tool-pairing.js';
import { RewriteCache, realizeRewrite, rewriteRef } from './realize-rewrite.js';

describe('rewriteRef', () => {
  it('gives the refs it gave before it built one flat string (stored states and archives name them)', () => {
    // Values of `${prefix}-${hashString(`${kind}\u0000${id}`)}`, the former code.
    expect(rewriteRef('cleared', 'h:k4n83c07h0j2b')).toBe('tool-pqpqr1hjyr6p');
    expect(rewriteRef('shortened', 'h:k4n83c07h0j2b')).toBe('args-jyjsf70h37sjh');
    expect(rewriteRef('cut', 'h:k4n83c07h0j2b')).toBe('cut-1hsmhcu0mcpzqx');
    expect(rewriteRef('cleared', 'call:call_0#3')).toBe('tool-1mup06e1gk22hm');
  });
});

describe('RewriteCache', () => {
  const counter = new BpeTokenCounter({ encoding: 'o200k_base' });
  const history = [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'grep', arguments: '{"q":"x"}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'found it in src/app.ts '.repeat(40) },
    { role: 'tool', tool_call_id: 'c1', content: 'another output '.repeat(40) },
  ];
  const index = new MessageIndex();
  const items = index.index(history, openaiChatCodec);
  const pairer = new ToolPairer();
  for (const [i, item] of items.entries()) pairer.add(item.entry.parsed, i);
  const context = { codec: openaiChatCodec, counter, pairer, items };

  it('realizes each (message, rewrite) once, tells rewrites apart by every field, forgets a session', () => {
    const cache = new RewriteCache();
    const cleared = { kind: 'cleared', ref: 'tool-a' } as const;
    const first = cache.get(context, items[1]!, cleared);
    expect(String((first.wire as { content: string }).content)).toContain('[cleared: grep output');
    // Same message, an equal rewrite (another object): the same wire, not made again.
    expect(cache.get(context, items[1]!, { ...cleared }).wire).toBe(first.wire);
    expect(cache.get(context, items[1]!, { ...cleared }).tokens).toBe(first.tokens);
    // Another ref, unarchived, another message: each its own.
    const otherRef = cache.get(context, items[1]!, { kind: 'cleared', ref: 'tool-b' });
    expect(otherRef.wire).not.toBe(first.wire);
    expect(JSON.stringify(otherRef.wire)).toContain('tool-b');
    const unarchived = cache.get(context, items[1]!, { ...cleared, unarchived: true });
    expect(JSON.stringify(unarchived.wire)).not.toContain('tool-a');
    expect(cache.get(context, items[2]!, cleared).wire).not.toBe(first.wire);
    // What it gives is what realizing gives.
    expect(first).toEqual(realizeRewrite(context, items[1]!, cleared));
    cache.forget([items[1]!]);
    expect(cache.get(context, items[1]!, cleared).wire).not.toBe(first.wire);
  });

  it('is bounded: past its size it starts again', () => {
    const cache = new RewriteCache(2);
    const first = cache.get(context, items[1]!, { kind: 'cleared', ref: 'tool-1' });
    cache.get(context, items[1]!, { kind: 'cleared', ref: 'tool-2' });
    cache.get(context, items[1]!, { kind: 'cleared', ref: 'tool-3' });
    expect(cache.get(context, items[1]!, { kind: 'cleared', ref: 'tool-1' }).wire).not.toBe(first.wire);
  });
});
