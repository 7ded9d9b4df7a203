/**
 * core-81: a Chat request compacted by the proxy opened with an assistant turn: the summary (an
 * assistant message in the Chat format) right after the system prompt once the first user
 * message was folded, or a pinned tool round kept ahead of the summary. Gemini's OpenAI-
 * compatible endpoint (an upstream docs/proxy.md names) and gateways to Anthropic models refuse
 * a conversation whose first turn is the assistant's. The summary now goes first, as a user
 * turn (the core's `summaryFirst`, as the AI SDK and LangChain adapters send it).
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
