/**
 * A client that rebuilds its system prompt every call (the time, a directory listing), with
 * no session header, through the proxy. Chat Completions and Responses carry the system prompt
 * as messages (`system`, `developer`): the fingerprint leaves them out, as it leaves out
 * Anthropic's `system` field, so every call lands in one session. Before, each call was a new
 * session: the summary made at one call was never resumed, and the history was compacted anew
 * at every call past the trigger (an LLM summarizer paid each time, the prompt cache rewritten).
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { reusedIdLoop } from '../support/tool-loop.js';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

const KEY = 'sk-test-proxy-key';
const CALLS = 12;
const output = (step: number) => `host ${step}: ${'metric=1 '.repeat(150)}`;
const systemAt = (step: number) =>
  `You are an SRE assistant. Current time: 10:${String(step).padStart(2, '0')}.`;

let running: ProxiedProvider | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function chatCalls(url: string): Promise<void> {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${url}/v1`, maxRetries: 0 });
  const tools: OpenAI.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'probe', parameters: { type: 'object', properties: {} } } },
  ];
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: systemAt(0) },
    { role: 'user', content: 'Probe every host and report.' },
  ];
  for (let step = 0; step < CALLS; step++) {
    messages[0] = { role: 'system', content: systemAt(step) };
    const completion = await client.chat.completions.create({ model: 'gpt-4o', messages, tools });
    const calls = completion.choices[0]!.message.tool_calls ?? [];
    messages.push({ role: 'assistant', content: null, tool_calls: calls });
    for (const call of calls) messages.push({ role: 'tool', tool_call_id: call.id, content: output(step) });
  }
}

async function responsesCalls(url: string): Promise<void> {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${url}/v1`, maxRetries: 0 });
  const tools: OpenAI.Responses.Tool[] = [
    { type: 'function', name: 'probe', parameters: { type: 'object', properties: {} }, strict: false },
  ];
  const input: OpenAI.Responses.ResponseInputItem[] = [
    { role: 'developer', content: systemAt(0) },
    { role: 'user', content: 'Probe every host and report.' },
  ];
  for (let step = 0; step < CALLS; step++) {
    input[0] = { role: 'developer', content: systemAt(step) };
    const response = await client.responses.create({ model: 'gpt-4o', input, tools });
    for (const item of response.output) {
      if (item.type !== 'function_call') continue;
      input.push({
        type: 'function_call',
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
      });
      input.push({ type: 'function_call_output', call_id: item.call_id, output: output(step) });
    }
  }
}

describe('a system prompt rebuilt every call, no session header', () => {
  for (const [name, calls] of [
    ['chat.completions (system message)', chatCalls],
    ['responses (developer message)', responsesCalls],
  ] as const) {
    it(`${name}: one session, the summary resumed`, async () => {
      running = await startProxiedProvider(reusedIdLoop({ tool: 'probe', idFor: (step) => `call_${step}` }));
      await calls(running.proxy.url);
      const { logs } = running;
      expect(logs).toHaveLength(CALLS);
      expect(new Set(logs.map((entry) => entry.session)).size).toBe(1);
      // The history outgrew the window: compacted, then resumed rather than compacted anew
      // at every call past the trigger.
      const applied = logs.filter((entry) => entry.applied === true).length;
      expect(applied).toBeGreaterThanOrEqual(1);
      expect(applied).toBeLessThan(logs.filter((entry) => (entry.tokensBefore ?? 0) > 0).length / 2);
    });
  }
});
