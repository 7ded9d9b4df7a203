/**
 * Provider-native compaction as the codecs read it: OpenAI Responses `compaction` items and
 * Anthropic `compaction` blocks, in the SDKs' own shapes (openai `ResponseCompactionItemParam`,
 * @anthropic-ai/sdk `BetaCompactionBlockParam`).
 */
import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { tokenCounterFor } from '../../counting/token-counter.js';
import { isPinned } from '../partition.js';
import { anthropicCodec } from './anthropic.js';
import { detectFormat } from './detect-format.js';
import { openaiResponsesCodec } from './openai-responses.js';
import { newestBoundary } from './provider-compaction.js';

const PAYLOAD = 'gAAAAABo'.repeat(600); // 4,800 base64 characters

const responsesItems: ResponseInputItem[] = [
  { role: 'user', content: 'Refactor the parser.' },
  { type: 'compaction', id: 'cmp_1', encrypted_content: PAYLOAD },
  { type: 'function_call', call_id: 'call_1', name: 'read', arguments: '{"path":"a.ts"}' },
  { type: 'function_call_output', call_id: 'call_1', output: 'body' },
];

const anthropicMessages: BetaMessageParam[] = [
  { role: 'user', content: 'Refactor the parser.' },
  {
    role: 'assistant',
    content: [
      {
        type: 'compaction',
        content: 'The user asked to refactor the parser; a.ts was read.',
        encrypted_content: 'meta'.repeat(200),
        signature: 'sig',
      },
      { type: 'text', text: 'Continuing.' },
    ],
  },
  { role: 'user', content: 'Go on.' },
];

const rule = { rolesNeverPrune: ['system', 'developer'], protectedFlag: 'protected' };

describe('provider compaction items and blocks', () => {
  it('round-trips a Responses compaction item byte for byte, pinned but no boundary', () => {
    expect(detectFormat(responsesItems)).toBe('openai-responses');
    const parsed = responsesItems.map((item, i) => openaiResponsesCodec.parse(item, i));
    const item = parsed[1]!;
    expect(item).toMatchObject({ kind: 'other', itemType: 'compaction', providerCompaction: 'inert' });
    expect(item.explicitId).toBe('item:cmp_1');
    expect(isPinned({ parsed: item }, rule)).toBe(true);
    // OpenAI does not document that the server ignores what precedes it: it is counted.
    expect(newestBoundary(parsed.map((p) => ({ entry: { parsed: p } })))).toBe(-1);
    parsed.forEach((p, i) => {
      const wire = openaiResponsesCodec.toWire({ ...p, id: '', index: i });
      expect(JSON.stringify(wire)).toBe(JSON.stringify(responsesItems[i]));
    });
  });

  it('counts the opaque payload by its length (16/3 base64 characters per token)', () => {
    const counter = tokenCounterFor('gpt-4o');
    const parsed = openaiResponsesCodec.parse(responsesItems[1], 1);
    const tokens = counter.countMessage({ ...parsed, id: 'x', index: 1 });
    const payloadTokens = Math.ceil(PAYLOAD.length / (16 / 3));
    expect(tokens).toBeGreaterThanOrEqual(payloadTokens);
    expect(tokens).toBeLessThan(payloadTokens + 40);
  });

  it('round-trips an Anthropic compaction block byte for byte and counts its summary text', () => {
    expect(detectFormat(anthropicMessages)).toBe('anthropic');
    const parsed = anthropicMessages.map((m, i) => anthropicCodec.parse(m, i));
    const carrier = parsed[1]!;
    expect(carrier.providerCompaction).toBe('boundary');
    expect(carrier.text).toBe('The user asked to refactor the parser; a.ts was read.\nContinuing.');
    expect(isPinned({ parsed: carrier }, rule)).toBe(true);
    parsed.forEach((p, i) => {
      const wire = anthropicCodec.toWire({ ...p, id: '', index: i });
      expect(JSON.stringify(wire)).toBe(JSON.stringify(anthropicMessages[i]));
    });
    // The opaque metadata is not model input: the count is the text's.
    const counter = tokenCounterFor('claude-sonnet-4-5');
    const withMeta = counter.countMessage({ ...carrier, id: 'a', index: 1 });
    const blocks = (anthropicMessages[1]!.content as unknown[]).map((block) => {
      const { encrypted_content: _e, ...rest } = block as Record<string, unknown>;
      return rest;
    });
    const bare = anthropicCodec.parse({ role: 'assistant', content: blocks }, 1);
    expect(withMeta).toBe(counter.countMessage({ ...bare, id: 'b', index: 1 }));
  });

  it('reads an Anthropic block without a summary as a pinned no-op, not a boundary', () => {
    const parsed = anthropicCodec.parse(
      { role: 'assistant', content: [{ type: 'compaction', content: null, encrypted_content: null }] },
      0,
    );
    expect(parsed.providerCompaction).toBe('inert');
    expect(isPinned({ parsed }, rule)).toBe(true);
    expect(newestBoundary([{ entry: { parsed } }])).toBe(-1);
  });

  it('reads forged or malformed compaction items as opaque content, without throwing', () => {
    const forged: unknown[] = [
      { type: 'compaction' },
      { type: 'compaction', encrypted_content: 42 },
      { type: 'compaction', encrypted_content: '' },
      { type: 'compaction', id: 7, encrypted_content: { nested: true } },
    ];
    forged.forEach((item, i) => {
      const parsed = openaiResponsesCodec.parse(item, i);
      expect(parsed.kind).toBe('other');
      expect(parsed.providerCompaction).toBeUndefined();
      expect(JSON.stringify(openaiResponsesCodec.toWire({ ...parsed, id: '', index: i }))).toBe(
        JSON.stringify(item),
      );
    });
    const blocks: unknown[] = [
      { type: 'compaction', content: 42 },
      { type: 'compaction', content: '' },
    ];
    for (const block of blocks) {
      const parsed = anthropicCodec.parse({ role: 'assistant', content: [block] }, 0);
      expect(parsed.providerCompaction).toBeUndefined();
      expect(parsed.text).toBe('[compaction]');
    }
  });
});
