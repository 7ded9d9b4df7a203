/**
 * A request that asks for a reply of N tokens (`max_completion_tokens`, `max_tokens`,
 * `max_output_tokens`) is refused by the provider when its prompt and N pass the window. The
 * proxy keeps that room free: the request's own figure is the buffer below the window when it
 * is larger than the policy's. Before, only the policy's buffer was kept (a tenth of an 8,000
 * window), and with the trigger alone deciding the loop below was refused at its 21st call.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { ProviderHandler } from '../../src/testing/provider-test-server.js';
import { type ProxiedProvider, startProxiedProvider, windowedProvider } from './proxy-fixture.js';

const WINDOW = 8000;
const REPLY = 1500;
const STEPS = 40;

let running: ProxiedProvider | undefined;
let counter: CompactManager | undefined;
afterEach(async () => {
  await running?.close();
  await counter?.shutdown();
  running = counter = undefined;
});

/** A provider that refuses a prompt whose tokens and the reply asked for pass the window. */
function strictProvider(count: CompactManager, asked: number[]): ProviderHandler {
  return windowedProvider({
    window: WINDOW,
    steps: STEPS,
    recorded: asked,
    measure: (body) => {
      const { messages, tools, max_completion_tokens } = body as {
        messages: unknown[];
        tools?: unknown[];
        max_completion_tokens: number;
      };
      return (
        count.estimate(messages, { format: 'openai-chat', tools: tools ?? [] }).total + max_completion_tokens
      );
    },
    refusal: () => `maximum context length is ${WINDOW} tokens`,
  });
}

describe('the reply a request asks for', () => {
  it('is kept free below the window: every prompt and its reply fit', async () => {
    counter = new CompactManager({ model: 'gpt-4o', maxContextTokens: 200_000, redaction: false });
    const asked: number[] = [];
    running = await startProxiedProvider(strictProvider(counter, asked), {
      // The trigger alone decides (preset quality; background and queue setups default to it too).
      manager: { model: 'gpt-4o', maxContextTokens: WINDOW, policy: { costTrigger: false } },
    });
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${running.proxy.url}/v1`, maxRetries: 0 });
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'probe', parameters: { type: 'object', properties: {} } } },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Probe every host.' }];
    for (let step = 0; step <= STEPS; step++) {
      const completion = await client.chat.completions.create({
        model: 'gpt-4o',
        messages,
        tools,
        max_completion_tokens: REPLY,
      });
      const calls = completion.choices[0]!.message.tool_calls ?? [];
      if (calls.length === 0) break;
      messages.push({ role: 'assistant', content: null, tool_calls: calls });
      for (const call of calls)
        messages.push({
          role: 'tool',
          tool_call_id: call.id,
          content: `output ${step}: ${'cpu=93% mem=71% disk=40% '.repeat(25)}`,
        });
    }
    expect(asked).toHaveLength(STEPS + 1);
    expect(asked.filter((tokens) => tokens > WINDOW)).toEqual([]);
    expect(running.logs.some((entry) => entry.applied === true)).toBe(true);
  });
});
