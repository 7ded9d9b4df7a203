/**
 * core-81: the input filter's request opens with a user turn. The Agents SDK runs other
 * providers' models on the same Responses items (`aisdk()` of @openai/agents-extensions, LiteLLM):
 * a request opening with the summary (an assistant item once the first user message is folded)
 * or with a pinned tool round ahead of it is refused by Anthropic ("first message must use the
 * user role") and Gemini. The summary now goes first there, as a user `input_text` message (the
 * core's `summaryFirst`, as every Chat-form integration sends it); the session's items are not
 * touched (a view handed back still resumes its assistant summary). The retry after a rejection
 * for length (`CompactionModel`) is compacted again and goes the same way.
 */
import { Agent, type Model, type ModelRequest } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { toolOutput } from '../../../test/support/tool-loop.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { CompactionModel, compactionInputFilter } from './index.js';

const SPEC = `Here is the spec. ${'The service must validate every request and log it. '.repeat(200)}`;

type Item = { type?: string; role?: string; content?: unknown; call_id?: string; meta?: unknown };

function history(pinned: boolean): Item[] {
  const items: Item[] = [];
  for (let k = 0; k < 30; k++) {
    const text = k === 0 ? SPEC : `Task ${k}: ${'please probe the host '.repeat(12)}`;
    items.push({ type: 'message', role: 'user', content: text });
    items.push({ type: 'function_call', call_id: `c${k}`, name: 'probe', arguments: '{}' } as Item);
    items.push({
      type: 'function_call_output',
      call_id: `c${k}`,
      output: toolOutput(k),
      ...(pinned && k === 3 ? { meta: { protected: true } } : {}),
    } as Item);
    items.push({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: `Done ${k}.` }],
    } as Item);
  }
  items.push({ type: 'message', role: 'user', content: 'Next?' });
  return items;
}

describe('the input filter', () => {
  it.each([
    { name: 'opens with a user turn', pinned: false },
    { name: 'opens with the summary ahead of a pinned tool round', pinned: true },
  ])('$name', async ({ pinned }) => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 6_000 });
    const agent = new Agent({ name: 'sre', instructions: 'Probe every host.' });
    const filter = compactionInputFilter(manager, { sessionId: `agents-${pinned}` });
    const out = await filter({
      modelData: { input: history(pinned) as never, instructions: 'Probe every host.' },
      agent,
      context: undefined,
    } as never);
    await manager.shutdown();
    const sent = out.input as Item[];
    expect(sent[0]?.role).toBe('user');
    expect(JSON.stringify(sent)).toContain('<COMPACT-SUMMARY v');
    for (const [i, item] of sent.entries())
      if (item.type === 'function_call') expect(sent[i + 1]?.call_id).toBe(item.call_id);
    if (pinned) {
      expect(JSON.stringify(sent[0]?.content)).toContain('<COMPACT-SUMMARY v');
      expect(sent[1]).toMatchObject({ type: 'function_call', call_id: 'c3' });
    }
  });
});

describe('the retry after a rejection for length', () => {
  it('opens with the summary ahead of a pinned tool round too', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 6_000 });
    const agent = new Agent({ name: 'sre', instructions: 'Probe every host.' });
    const filter = compactionInputFilter(manager, { sessionId: 'agents-retry' });
    const out = await filter({
      modelData: { input: history(true) as never, instructions: 'Probe every host.' },
      agent,
      context: undefined,
    } as never);
    const asked: ModelRequest[] = [];
    const model = new CompactionModel({
      async getResponse(request: ModelRequest) {
        asked.push(request);
        if (asked.length === 1)
          throw Object.assign(new Error('maximum context length is 3000 tokens'), { status: 400 });
        return { usage: {}, output: [], responseId: 'r' };
      },
    } as unknown as Model);
    await model.getResponse({ input: out.input } as unknown as ModelRequest);
    await manager.shutdown();
    expect(asked).toHaveLength(2);
    const retried = asked[1]!.input as Item[];
    expect(retried).not.toBe(out.input);
    expect(retried[0]?.role).toBe('user');
    expect(JSON.stringify(retried[0]?.content)).toContain('<COMPACT-SUMMARY v');
    for (const [i, item] of retried.entries())
      if (item.type === 'function_call') expect(retried[i + 1]?.call_id).toBe(item.call_id);
  });
});
