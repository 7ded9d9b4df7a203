import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { TimeSlice } from '../../core/time-slice.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { countBreakpoints, placeBreakpoints, placeBreakpointsInSlices } from './cache-breakpoints.js';
import { withCompaction } from './index.js';

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SYSTEM = 'You are a release assistant.';

function thread(turns: number): Anthropic.MessageParam[] {
  const out: Anthropic.MessageParam[] = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: 'user', content: `status ${i}: ${'log line ok; '.repeat(80)}` });
    out.push({ role: 'assistant', content: [{ type: 'text', text: `noted ${i}` }] });
  }
  out.push({ role: 'user', content: 'what is left?' });
  return out;
}

const marksOf = (value: unknown) => JSON.stringify(value).split('"cache_control"').length - 1;

describe('Anthropic cache breakpoints placed by withCompaction', () => {
  it('after the system prompt, after the summary and on the newest message; the caller’s objects untouched', async () => {
    server = await startProviderTestServer({ handler: () => ({ text: 'ok' }) });
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: 4_000 });
    const client = withCompaction(
      new Anthropic({ apiKey: 'k', baseURL: server.anthropicBaseURL, maxRetries: 0 }),
      manager,
      {
        sessionId: 'bp',
      },
    );
    const messages = thread(12);
    const before = structuredClone(messages);
    await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, system: SYSTEM, messages });
    expect(messages).toEqual(before);
    const body = server.requests.at(-1)!.body as { system: unknown; messages: { content: unknown }[] };
    expect(countBreakpoints(body as never)).toBe(3);
    expect(body.system).toEqual([{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }]);
    const summaryAt = body.messages.findIndex((m) =>
      JSON.stringify(m.content).includes('<COMPACT-SUMMARY v1>'),
    );
    expect(summaryAt).toBeGreaterThanOrEqual(0);
    expect(marksOf(body.messages[summaryAt])).toBe(1);
    expect(marksOf(body.messages.at(-1))).toBe(1);
    await manager.shutdown();
  });

  it("keeps the caller's marks: 'auto' adds none beside them, true adds up to 4 in all", () => {
    const own = {
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: '<COMPACT-SUMMARY v2>\nsummary\n</COMPACT-SUMMARY>' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'next' },
      ],
    };
    expect(placeBreakpoints(own, 'auto')).toBe(own);
    const added = placeBreakpoints(own, true);
    expect(countBreakpoints(added)).toBe(3);
    expect(added.system).toBe(own.system);
    const full = {
      tools: [1, 2, 3].map((n) => ({
        name: `t${n}`,
        input_schema: {},
        cache_control: { type: 'ephemeral' },
      })),
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      messages: own.messages,
    };
    expect(countBreakpoints(placeBreakpoints(full, true))).toBe(4);
    expect(placeBreakpoints(own, false)).toBe(own);
  });

  it("counts the caller's marks inside a tool result's blocks: never more than 4 in all", () => {
    const body = {
      tools: [{ name: 'probe', input_schema: {}, cache_control: { type: 'ephemeral' } }],
      system: [
        { type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Check every host.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [
        { role: 'user', content: '<COMPACT-SUMMARY v1>\ns\n</COMPACT-SUMMARY>' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'probe', input: {} }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [{ type: 'text', text: 'up', cache_control: { type: 'ephemeral' } }],
            },
          ],
        },
        { role: 'user', content: 'go on' },
      ],
    };
    expect(countBreakpoints(body)).toBe(4);
    const placed = placeBreakpoints(body, true);
    expect(marksOf(placed)).toBe(4);
    expect(placed).toEqual(body);
  });

  it('never more than 4, whatever the request holds', () => {
    for (let marks = 0; marks <= 6; marks++) {
      const body = {
        tools: Array.from({ length: marks }, (_, n) => ({
          name: `t${n}`,
          cache_control: { type: 'ephemeral' },
        })),
        system: 'sys',
        messages: [
          { role: 'user', content: '<COMPACT-SUMMARY v1>\ns\n</COMPACT-SUMMARY>' },
          { role: 'user', content: 'go' },
        ],
      };
      expect(countBreakpoints(placeBreakpoints(body, true))).toBe(Math.max(marks, Math.min(4, marks + 3)));
    }
  });

  it('never on a thinking block or an empty text: the last block the API takes a mark on, else none', () => {
    // Review 80: the newest message's last block was marked whatever it was; Anthropic refuses
    // cache_control on a thinking block and on an empty text block.
    const thinking = { type: 'thinking', thinking: 'plan', signature: 'sig' };
    const cases = [
      { content: [thinking, { type: 'text', text: 'answer' }, { type: 'text', text: '' }], at: 1 },
      {
        content: [
          { type: 'text', text: 'before' },
          { type: 'redacted_thinking', data: 'x' },
        ],
        at: 0,
      },
      { content: [thinking], at: -1 },
      { content: '', at: -1 },
    ];
    for (const { content, at } of cases) {
      const body = {
        system: 'sys',
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content },
        ],
      };
      const placed = placeBreakpoints(body, true) as { messages: { content: unknown }[] };
      const newest = placed.messages[1]!.content;
      const markedAt = Array.isArray(newest)
        ? newest.findIndex((block) => (block as { cache_control?: unknown }).cache_control !== undefined)
        : -1;
      expect(markedAt, JSON.stringify(content)).toBe(at);
      if (at < 0) expect(placed.messages[1]).toEqual(body.messages[1]);
    }
  });

  it('in slices: the same body, the loop given a turn during the passes over a long request', async () => {
    // Issue 47: the passes over 16k messages ran in the turn of the SDK's own encoding.
    const messages = thread(1_500).map((message, index) =>
      index === 40
        ? { role: 'user' as const, content: '<COMPACT-SUMMARY v2>\ns\n</COMPACT-SUMMARY>' }
        : message,
    );
    for (const option of ['auto', true] as const) {
      const body = { system: SYSTEM, messages };
      const before = structuredClone(body);
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      const sliced = await placeBreakpointsInSlices(body, option, new TimeSlice({ sliceMs: 0 }));
      expect(turned).toBe(true);
      expect(sliced).toEqual(placeBreakpoints(body, option));
      expect(marksOf(sliced)).toBe(3);
      expect(body).toEqual(before);
    }
  });
});
