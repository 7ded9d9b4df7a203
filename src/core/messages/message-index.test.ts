import { describe, expect, it } from 'vitest';
import { BpeTokenCounter } from '../counting/token-counter.js';
import { anthropicCodec } from './formats/anthropic.js';
import { openaiChatCodec } from './formats/openai-chat.js';
import { MessageIndex } from './message-index.js';

const message = () => ({ role: 'user', content: 'run the tests again' });

describe('MessageIndex content cache', () => {
  it('finds a rebuilt object by content, and keeps its parse and counts', () => {
    const index = new MessageIndex();
    const first = index.entry(message(), 0, openaiChatCodec);
    const again = index.entry(message(), 3, openaiChatCodec);
    expect(again.parsed).not.toBe(first.parsed);
    expect(again.parsed.text).toBe(first.parsed.text);
    expect(again.hash).toBe(first.hash);
    expect(again.contentKey).toBe(first.contentKey);
    expect(index.size).toBe(1);
    // The counts are shared both ways (a count made on either is not made again).
    const [a, b] = [1, 1.1].map((margin) => new BpeTokenCounter({ encoding: 'o200k_base', margin }));
    if (!a || !b) throw new Error('two counters');
    first.tokens.set(a, 10);
    again.tokens.set(b, 20);
    expect([again.tokens.get(a), first.tokens.get(b)]).toEqual([10, 20]);
    expect(index.entry(message(), 5, openaiChatCodec).tokens.get(b)).toBe(20);
  });

  it('tells the same JSON in two formats apart (one key: the newer replaces the older)', () => {
    const index = new MessageIndex();
    const chat = index.entry(message(), 0, openaiChatCodec);
    const bytes = index.bytes;
    const anthropic = index.entry(message(), 0, anthropicCodec);
    expect(anthropic.parsed.format).toBe('anthropic');
    expect(chat.parsed.format).toBe('openai-chat');
    expect(anthropic.hash).toBe(chat.hash);
    expect([index.size, index.bytes]).toEqual([1, bytes]);
    // A new object in the first format again: parsed in that format, not the other's parse.
    expect(index.entry(message(), 0, openaiChatCodec).parsed.format).toBe('openai-chat');
    expect([index.size, index.bytes]).toEqual([1, bytes]);
  });

  it('keys a message with meta apart from the same message without it', () => {
    const index = new MessageIndex();
    const plain = index.entry(message(), 0, openaiChatCodec);
    const flagged = index.entry({ ...message(), meta: { protected: true } }, 0, openaiChatCodec);
    expect(flagged.hash).toBe(plain.hash);
    expect(flagged.contentKey).not.toBe(plain.contentKey);
    expect(flagged.parsed.meta).toEqual({ protected: true });
    expect(index.size).toBe(2);
  });

  it('forgets an entry and its bytes, not an entry of another format that replaced it', () => {
    const index = new MessageIndex();
    const chat = index.entry(message(), 0, openaiChatCodec);
    const other = index.entry({ role: 'user', content: 'another message' }, 1, openaiChatCodec);
    index.forget([chat]);
    expect(index.size).toBe(1);
    index.forget([other]);
    expect([index.size, index.bytes]).toEqual([0, 0]);

    const first = index.entry(message(), 0, openaiChatCodec);
    index.entry(message(), 0, anthropicCodec);
    index.forget([first]);
    expect(index.size).toBe(1);
  });
});
