/**
 * Provider-native compaction in whole preflights (issue 25, item 6): an OpenAI Responses
 * `compaction` item or an Anthropic `compaction` block is kept byte for byte through every
 * compaction and the requests stay under the window. What precedes the newest Anthropic
 * block is sent as the caller wrote it and never counted (the API drops it); what precedes an
 * OpenAI item is counted like any input (OpenAI does not document that the server ignores it). Real wire shapes, no mocks; the SDK path runs
 * against the loopback provider server.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';

const PAYLOAD = 'gAAAAABoQ2'.repeat(400); // 4,000 base64 characters, about 750 tokens

function compactionItem(id: string): Record<string, unknown> {
  return { type: 'compaction', id, encrypted_content: `${PAYLOAD}${id}` };
}

/** A Responses tool round whose output is about `tokens` tokens. */
function responsesRound(step: number, tokens: number): Record<string, unknown>[] {
  const call = `call_${step}`;
  return [
    { type: 'function_call', call_id: call, name: 'bash', arguments: `{"cmd":"make step-${step}"}` },
    {
      type: 'function_call_output',
      call_id: call,
      output: `step ${step}: ${'build output line ok\n'.repeat(Math.ceil(tokens / 5))}`,
    },
  ];
}

/** An Anthropic tool round (assistant tool_use, user tool_result) of about `tokens` tokens. */
function anthropicRound(step: number, tokens: number): Record<string, unknown>[] {
  const id = `toolu_${step}`;
  return [
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'bash', input: { cmd: `make step-${step}` } }],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: id,
          content: `step ${step}: ${'build output line ok\n'.repeat(Math.ceil(tokens / 5))}`,
        },
      ],
    },
  ];
}

/** A long stretch the provider already compacted: far larger than the window. */
function preBoundaryHistory(): Record<string, unknown>[] {
  return [
    { type: 'message', role: 'developer', content: 'Work in small steps.' },
    { role: 'user', content: 'Make the nightly build green.' },
    ...Array.from({ length: 12 }, (_, step) => responsesRound(100 + step, 1_500)).flat(),
  ];
}

const index = (messages: readonly unknown[], item: unknown) =>
  messages.findIndex((m) => JSON.stringify(m) === JSON.stringify(item));

describe('OpenAI Responses compaction items', () => {
  it('counts what precedes the item (the server may read it) and compacts it to fit, the item kept', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    const item = compactionItem('cmp_1');
    const tail = [item, { role: 'user', content: 'Next: fix the linker.' }];
    const history = [...preBoundaryHistory(), ...tail];
    expect(manager.estimate(history).total).toBeGreaterThan(manager.estimate(tail).total + 10_000);
    const full = await manager.compact('full', history);
    expect(full.applied).toBe(true);
    expect(manager.estimate(full.messages).total).toBeLessThanOrEqual(manager.budget);
    expect(full.messages.filter((m) => JSON.stringify(m) === JSON.stringify(item))).toHaveLength(1);
  });

  it('two items: both are kept byte for byte and everything is counted', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 64_000 });
    const [first, second] = [compactionItem('cmp_1'), compactionItem('cmp_2')];
    const tail = [second, { role: 'user', content: 'Carry on.' }];
    const history = [...preBoundaryHistory(), first, ...responsesRound(1, 1_500), ...tail];
    const full = await manager.compact('two', history);
    expect(full.tokensBefore).toBeGreaterThan(manager.estimate(tail).total + 10_000);
    for (const item of [first, second])
      expect(full.messages.filter((m) => JSON.stringify(m) === JSON.stringify(item))).toHaveLength(1);
  });

  it('keeps the item through every compaction of a long session, under the window', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    const item = compactionItem('cmp_1');
    const history: Record<string, unknown>[] = [...preBoundaryHistory(), item];
    let compactions = 0;
    for (let step = 0; step < 40; step++) {
      history.push({ role: 'user', content: `Step ${step}: run the next build.` });
      history.push(...responsesRound(step, 600));
      const result = await manager.compact('long', history);
      if (result.applied) compactions++;
      expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
      expect(manager.estimate(result.messages).total).toBeLessThanOrEqual(manager.budget);
      // The item itself goes out byte for byte in every request.
      expect(index(result.messages, item)).toBeGreaterThanOrEqual(0);
    }
    expect(compactions).toBeGreaterThan(0);
  });

  it('a forged item without its payload is opaque content: counted as sent, no crash', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 64_000 });
    const tail = [{ role: 'user', content: 'Next.' }];
    const history = [...preBoundaryHistory(), { type: 'compaction', id: 'cmp_x' }, ...tail];
    const result = await manager.compact('forged', history);
    expect(result.tokensBefore).toBeGreaterThan(10_000);
    expect(result.tokensBefore).toBeLessThanOrEqual(result.budget);
  });
});

describe('Anthropic compaction blocks', () => {
  const block = {
    type: 'compaction',
    content: 'Summary: the user wants the nightly build green; steps 100-111 ran make.',
    encrypted_content: 'opaque-metadata'.repeat(20),
  };

  function history(): Record<string, unknown>[] {
    return [
      { role: 'user', content: 'Make the nightly build green.' },
      ...Array.from({ length: 12 }, (_, step) => anthropicRound(100 + step, 1_500)).flat(),
      { role: 'user', content: 'Continue.' },
      { role: 'assistant', content: [block, { type: 'text', text: 'Resuming from the summary.' }] },
    ];
  }

  it('does not count what precedes the block; the block counts as its summary', async () => {
    const manager = new CompactManager({ model: 'claude-sonnet-4-5', maxContextTokens: 8_000 });
    const full = history();
    const tail = full.slice(-1);
    expect(manager.estimate(full).total).toBe(manager.estimate(tail).total);
    const result = await manager.compact('count', full, { system: 'You are a build agent.' });
    expect(result.applied).toBe(false);
    expect(result.messages).toEqual(full);
  });

  it('keeps the block through every compaction of a long session, under the window', async () => {
    const manager = new CompactManager({ model: 'claude-sonnet-4-5', maxContextTokens: 8_000 });
    const messages = history();
    const carrier = messages.at(-1)!;
    const prefix = messages.length - 1;
    let compactions = 0;
    for (let step = 0; step < 40; step++) {
      messages.push({ role: 'user', content: `Step ${step}: run the next build.` });
      messages.push(...anthropicRound(step, 600));
      const result = await manager.compact('long', messages, { system: 'You are a build agent.' });
      if (result.applied) compactions++;
      expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
      const at = index(result.messages, carrier);
      expect(at).toBe(prefix);
      expect(JSON.stringify(result.messages.slice(0, at + 1))).toBe(
        JSON.stringify(messages.slice(0, prefix + 1)),
      );
      const summaryAt = result.messages.findIndex((m) => JSON.stringify(m).includes('<COMPACT-SUMMARY v'));
      if (summaryAt >= 0) expect(summaryAt).toBeGreaterThan(at);
    }
    expect(compactions).toBeGreaterThan(0);
  });
});

describe('end to end through the openai SDK', () => {
  let server: ProviderTestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a compaction item the server returns is sent back byte for byte on every later request', async () => {
    let turn = 0;
    server = await startProviderTestServer({
      handler: () => {
        turn++;
        // The first reply carries the server's compaction (context_management crossed its threshold).
        const output: unknown[] =
          turn === 1
            ? [compactionItem('cmp_srv')]
            : [
                {
                  type: 'function_call',
                  id: `fc_${turn}`,
                  call_id: `call_${turn}`,
                  name: 'bash',
                  arguments: '{}',
                },
              ];
        output.push({
          type: 'message',
          id: `msg_${turn}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: `turn ${turn}`, annotations: [] }],
        });
        return {
          json: {
            id: `resp_${turn}`,
            object: 'response',
            created_at: 1_700_000_000,
            model: 'gpt-4o',
            status: 'completed',
            output,
            usage: { input_tokens: 100, output_tokens: 10, total_tokens: 110 },
          },
        };
      },
    });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test', maxRetries: 0 });
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    const history: Record<string, unknown>[] = [...preBoundaryHistory()];
    for (let step = 0; step < 14; step++) {
      history.push({ role: 'user', content: `Step ${step}: continue.` });
      const input = await manager.preflight('e2e', history);
      expect(manager.estimate(input).total).toBeLessThanOrEqual(manager.budget);
      const response = await client.responses.create({ model: 'gpt-4o', input: input as never });
      for (const item of response.output) {
        history.push(item as unknown as Record<string, unknown>);
        if (item.type === 'function_call')
          history.push({ type: 'function_call_output', call_id: item.call_id, output: 'ok '.repeat(300) });
      }
    }
    const sent = server.requests.map((request) => (request.body as { input: unknown[] }).input);
    const wire = JSON.stringify(compactionItem('cmp_srv'));
    const before = preBoundaryHistory().length + 1; // and the first user message
    // The first request had no item yet: the library compacted it to fit the window.
    expect(sent[0]!.length).toBeLessThan(before);
    expect(JSON.stringify(sent[0])).toContain('<COMPACT-SUMMARY v1>');
    // Every later request carries the server's item once, byte for byte.
    for (const input of sent.slice(1))
      expect(input.filter((item) => JSON.stringify(item) === wire)).toHaveLength(1);
  });
});
