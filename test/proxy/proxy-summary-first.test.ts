/**
 * core-81: a Chat request compacted by the proxy opened with an assistant turn: the summary (an
 * assistant message in the Chat format) right after the system prompt once the first user
 * message was folded, or a pinned tool round kept ahead of the summary. Gemini's OpenAI-
 * compatible endpoint (an upstream docs/proxy.md names) and gateways to Anthropic models refuse
 * a conversation whose first turn is the assistant's. The summary now goes first, as a user
 * turn (the core's `summaryFirst`, as the AI SDK and LangChain adapters send it).
 * The other routes, checked alike: an Anthropic request was right (the manager assembles it with
 * the summary first); a Responses request goes in the manager's order (the Responses API takes
 * an assistant item first), its calls with their outputs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { toolOutput } from '../support/tool-loop.js';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

const SPEC = `Here is the spec. ${'The service must validate every request and log it. '.repeat(200)}`;

type Chat = { role: string; content?: unknown; tool_calls?: { id: string }[]; tool_call_id?: string };

let running: ProxiedProvider | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

function history(pinned: boolean): Chat[] {
  const messages: Chat[] = [{ role: 'system', content: 'You are an SRE agent.' }];
  for (let k = 0; k < 30; k++) {
    messages.push({
      role: 'user',
      content: k === 0 ? SPEC : `Task ${k}: ${'please probe the host '.repeat(12)}`,
    });
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'probe', arguments: '{}' } } as never],
    });
    messages.push({
      role: 'tool',
      tool_call_id: `c${k}`,
      content: toolOutput(k),
      ...(pinned && k === 3 ? { meta: { protected: true } } : {}),
    });
    messages.push({ role: 'assistant', content: `Done ${k}.` });
  }
  messages.push({ role: 'user', content: 'Next?' });
  return messages;
}

describe('a Chat request the proxy compacts', () => {
  it.each([
    { name: 'opens with a user turn', pinned: false },
    { name: 'opens with the summary ahead of a pinned tool round', pinned: true },
  ])('$name', async ({ pinned }) => {
    running = await startProxiedProvider(() => ({ text: 'Done.' }), {
      manager: { model: 'gpt-4o', maxContextTokens: 6_000 },
    });
    const response = await fetch(`${running.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'gpt-4o', messages: history(pinned) }),
    });
    expect(response.status).toBe(200);
    await response.text();
    const sent = (running.provider.requests[0]!.body as { messages: Chat[] }).messages;
    const first = sent.find((message) => message.role !== 'system');
    expect(first?.role).toBe('user');
    expect(JSON.stringify(sent)).toContain('<COMPACT-SUMMARY v');
    for (const [i, message] of sent.entries()) {
      for (const call of message.tool_calls ?? [])
        expect(
          sent.slice(i + 1).find((next) => next.role !== 'tool' || next.tool_call_id === call.id)
            ?.tool_call_id,
        ).toBe(call.id);
    }
    if (pinned) {
      expect(JSON.stringify(first?.content)).toContain('<COMPACT-SUMMARY v');
      const call = sent.findIndex((message) => message.tool_calls?.[0]?.id === 'c3');
      expect(call).toBeGreaterThan(sent.indexOf(first!));
      expect(sent[call + 1]?.tool_call_id).toBe('c3');
    }
  });
});

type Block = { type: string; id?: string; tool_use_id?: string; [field: string]: unknown };
type Turn = { role: string; content: Block[]; meta?: unknown };

function anthropicHistory(): Turn[] {
  return history(true)
    .slice(1)
    .map((message): Turn => {
      if (message.role === 'tool') {
        const pinned = message.tool_call_id === 'c3' ? { meta: { protected: true } } : {};
        const block = {
          type: 'tool_result',
          tool_use_id: String(message.tool_call_id),
          content: message.content,
        };
        return { role: 'user', content: [block], ...pinned };
      }
      if (message.tool_calls)
        return {
          role: 'assistant',
          content: [{ type: 'tool_use', id: message.tool_calls[0]!.id, name: 'probe', input: {} }],
        };
      return { role: message.role, content: [{ type: 'text', text: message.content }] };
    });
}

describe('the other routes', () => {
  it('an Anthropic request opens with the summary ahead of a pinned tool round', async () => {
    running = await startProxiedProvider(() => ({ text: 'Done.' }), {
      manager: { model: 'claude-sonnet-4-6', maxContextTokens: 6_000 },
    });
    const response = await fetch(`${running.proxy.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'sk-test',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({
        model: 'claude-sonnet-4-6',
        max_tokens: 100,
        system: 'You are an SRE agent.',
        messages: anthropicHistory(),
      }),
    });
    expect(response.status).toBe(200);
    await response.text();
    const sent = (running.provider.requests[0]!.body as { messages: Turn[] }).messages;
    expect(sent[0]?.role).toBe('user');
    expect(JSON.stringify(sent[0]?.content)).toContain('<COMPACT-SUMMARY v');
    const call = sent.findIndex((turn) => turn.content.some((block) => block.id === 'c3'));
    expect(sent[call + 1]?.content[0]?.tool_use_id).toBe('c3');
  });

  it('a Responses request keeps each call with its output', async () => {
    running = await startProxiedProvider(() => ({ text: 'Done.' }), {
      manager: { model: 'gpt-4o', maxContextTokens: 6_000 },
    });
    const input = history(true)
      .slice(1)
      .flatMap((message): Record<string, unknown>[] => {
        if (message.role === 'tool')
          return [{ type: 'function_call_output', call_id: message.tool_call_id, output: message.content }];
        if (message.tool_calls)
          return [
            { type: 'function_call', call_id: message.tool_calls[0]!.id, name: 'probe', arguments: '{}' },
          ];
        return [{ type: 'message', role: message.role, content: message.content }];
      });
    const response = await fetch(`${running.proxy.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'gpt-4o', instructions: 'You are an SRE agent.', input }),
    });
    expect(response.status).toBe(200);
    await response.text();
    const sent = (running.provider.requests[0]!.body as { input: { type: string; call_id?: string }[] })
      .input;
    expect(JSON.stringify(sent)).toContain('<COMPACT-SUMMARY v');
    for (const [i, item] of sent.entries())
      if (item.type === 'function_call')
        expect(sent[i + 1]).toMatchObject({ type: 'function_call_output', call_id: item.call_id });
  });
});
