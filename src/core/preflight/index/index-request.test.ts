/**
 * The indexed history's prefix chain, kept as two 32-bit lanes per message (issue 47: no
 * string per message for the scavenges of a cold index to copy), reads exactly as the chain
 * of strings it replaced: anchors written by earlier versions keep matching.
 */
import { describe, expect, it } from 'vitest';
import { codecFor } from '../../messages/formats/detect-format.js';
import { hashLanes, hashString, lanesString } from '../../messages/hash-string.js';
import { MessageIndex } from '../../messages/message-index.js';
import { chainLink, IndexedHistory } from './index-request.js';
import { requestShowsAssistant } from './request-shows-assistant.js';

/** A chat history of `n` messages: user turns, tool calls and their results. */
function history(n: number, edit = -1): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const text = i === edit ? `edited ${i}` : `message ${i}`;
    if (i % 3 === 0) out.push({ role: 'user', content: text });
    else if (i % 3 === 1)
      out.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'read', arguments: text } }],
      });
    else out.push({ role: 'tool', tool_call_id: `call_${i - 1}`, content: text });
  }
  return out;
}

/** The chain as strings, link by link, as the index computed it before it kept lanes. */
function chainOf(indexed: IndexedHistory): string[] {
  const links: string[] = [];
  for (let i = 0; i < indexed.length; i++) {
    const item = indexed.items.at(i)!;
    links.push(chainLink(links[i - 1] ?? '', item.id, item.entry.hash));
  }
  return links;
}

describe('IndexedHistory prefix chain', () => {
  it('reads as the chain of string links, past the growth of its column', () => {
    const messages = history(300);
    const codec = codecFor(messages, undefined);
    const indexed = new IndexedHistory();
    indexed.update(messages.slice(0, 40), codec, new MessageIndex());
    indexed.update(messages, codec, new MessageIndex());
    const expected = chainOf(indexed);
    expect(expected).toHaveLength(300);
    expect(new Set(expected).size).toBe(300);
    for (let i = 0; i < 300; i++) expect(indexed.chainAt(i)).toBe(expected[i]);
    expect(indexed.chainAt(-1)).toBe('');
    expect(indexed.chainAt(300)).toBe('');
  });

  it('after a rollback, extends from the link kept, as a fresh index of the edited history', () => {
    const messages = history(200);
    const codec = codecFor(messages, undefined);
    const index = new MessageIndex();
    const indexed = new IndexedHistory();
    indexed.update(messages, codec, index);
    const before = chainOf(indexed);
    const edited = history(210, 195);
    expect(indexed.update(edited, codec, index)).toBe(195);
    const fresh = new IndexedHistory();
    fresh.update(history(210, 195), codec, new MessageIndex());
    for (let i = 0; i < 210; i++) expect(indexed.chainAt(i)).toBe(fresh.chainAt(i));
    expect(indexed.chainAt(194)).toBe(before[194]);
    expect(indexed.chainAt(195)).not.toBe(before[195]);
  });

  it('hashLanes prints as hashString', () => {
    for (const text of ['', 'a', 'hello world', 'x'.repeat(1000)]) {
      const lanes = hashLanes(text, 7);
      expect(lanesString(lanes[0]!, lanes[1]!)).toBe(hashString(text, 7));
    }
  });

  it('counts the messages that show an assistant as the history grows and rolls back', () => {
    const user = (i: number) => ({ role: 'user', content: `question ${i}` });
    const plain = [user(0), { role: 'assistant', content: 'answer' }, user(1)];
    const codec = codecFor(plain, undefined);
    const indexed = new IndexedHistory();
    const index = new MessageIndex();
    indexed.update(plain, codec, index);
    expect(requestShowsAssistant(indexed, {})).toBe(false);
    const withTools = history(30);
    indexed.update(withTools, codec, index);
    // 10 user turns, 10 calls, 10 results.
    expect(indexed.assistantShown).toBe(20);
    expect(requestShowsAssistant(indexed, {})).toBe(true);
    // An edit rolls back to message 4: the calls and results after it are no longer counted.
    indexed.update([...withTools.slice(0, 4), user(9)], codec, index);
    expect(indexed.assistantShown).toBe(2);
    indexed.update(plain, codec, index);
    expect(indexed.assistantShown).toBe(0);
    expect(requestShowsAssistant(indexed, {})).toBe(false);
    expect(requestShowsAssistant(indexed, { system: 'You are terse.' })).toBe(true);
  });
});
