import { describe, expect, it } from 'vitest';
import { sampleMessages } from '../../test/fixtures/summarizers/sample-session.js';
import {
  chunkTranscriptEntries,
  estimateTokens,
  renderTranscript,
  renderTranscriptEntries,
  shortenHeadTail,
} from './render-transcript.js';

describe('renderTranscript', () => {
  it('labels roles, shows tool calls with arguments and results, never dumps message JSON', () => {
    const text = renderTranscript(sampleMessages());
    expect(text).toContain('[#1 user] Migrate the billing service');
    expect(text).toContain('-> call read_file({"path":"db/schema.sql"}) [call_1]');
    expect(text).toContain('<- result [call_1]: CREATE TABLE invoices');
    expect(text).not.toContain('"role"');
    expect(text).not.toContain('"toolCalls"');
    expect(text).not.toContain('"raw"');
  });

  it('shortens a long tool result head-and-tail to its budget', () => {
    const text = renderTranscript(sampleMessages(), { toolResultTokens: 100 });
    const line = text.split('\n').find((l) => l.includes('[call_2]:'))!;
    expect(line).toContain('line 0: test suite');
    expect(text).toContain('line 399: test suite');
    expect(text).toMatch(/… \[\d+ tokens omitted\] …/);
    expect(text).not.toContain('line 200: test suite');
  });

  it('marks error results and non-message kinds', () => {
    const [first] = sampleMessages();
    const entries = renderTranscriptEntries([
      { ...first!, kind: 'reasoning', role: 'assistant', text: 'thinking' },
      { ...first!, kind: 'other', itemType: 'web_search_call', text: '' },
      { ...first!, toolResults: [{ callId: 'c', output: 'boom', isError: true }] },
    ]);
    expect(entries.map((e) => e.text.split('\n')[0])).toEqual([
      '[#1 assistant reasoning] thinking',
      '[#1 user web_search_call]',
      expect.stringContaining('[#1 user] Migrate'),
    ]);
    expect(entries[2]!.text).toContain('<- error [c]: boom');
  });
});

describe('shortenHeadTail', () => {
  it('returns text within budget unchanged and shortens longer text to the budget', () => {
    expect(shortenHeadTail('short', 10)).toBe('short');
    const long = 'a'.repeat(1000) + 'MIDDLE' + 'z'.repeat(1000);
    const short = shortenHeadTail(long, 50);
    expect(estimateTokens(short)).toBeLessThanOrEqual(50);
    expect(short.startsWith('aaa')).toBe(true);
    expect(short.endsWith('zzz')).toBe(true);
    expect(short).not.toContain('MIDDLE');
  });

  it('degrades to a marker for a tiny budget', () => {
    expect(shortenHeadTail('x'.repeat(400), 3)).toMatch(/tokens omitted/);
  });
});

describe('chunkTranscriptEntries', () => {
  it('keeps entries whole and in order, each chunk within budget', () => {
    const entries = Array.from({ length: 20 }, (_, i) => ({
      id: `e${i}`,
      text: `entry ${i} ${'x'.repeat(80)}`,
    }));
    const chunks = chunkTranscriptEntries(entries, 60);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(estimateTokens(chunk)).toBeLessThanOrEqual(60);
    expect(chunks.join('\n')).toBe(entries.map((e) => e.text).join('\n'));
  });

  it('shortens an entry larger than the budget on its own', () => {
    const chunks = chunkTranscriptEntries([{ id: 'big', text: 'y'.repeat(2000) }], 40);
    expect(chunks).toHaveLength(1);
    expect(estimateTokens(chunks[0]!)).toBeLessThanOrEqual(40);
  });
});
