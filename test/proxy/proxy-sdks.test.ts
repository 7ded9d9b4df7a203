/**
 * The official Node SDKs through the proxy, in front of the loopback provider server: a long
 * tool loop in which the client resends its whole history every step (as every stateless
 * client does) and sends no session header. Every request the provider receives stays inside
 * the 8,000-token window with its tool pairs intact, streamed and not; usage reaches the manager.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { requestViolations, reusedIdLoop, STEPS, toolOutput, WINDOW } from '../support/tool-loop.js';
import { answerToolUses, type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

const SYSTEM = 'You are an SRE assistant. Check every host before answering.';
const PROMPT = 'Probe every host and report.';
const KEY = 'sk-test-proxy-key';
const MAX_STEPS = STEPS + 2;

let running: ProxiedProvider | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

type Loop = (proxyUrl: string, streamed: boolean) => Promise<string>;

const chatLoop: Loop = async (proxyUrl, streamed) => {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${proxyUrl}/v1`, maxRetries: 0 });
  const tools: OpenAI.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'probe', parameters: { type: 'object', properties: {} } } },
  ];
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: PROMPT },
  ];
  for (let step = 0; step < MAX_STEPS; step++) {
    const params = { model: 'gpt-4o', messages, tools };
    const completion = streamed
      ? await client.chat.completions
          .stream({ ...params, stream_options: { include_usage: true } })
          .finalChatCompletion()
      : await client.chat.completions.create(params);
    const message = completion.choices[0]!.message;
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return message.content ?? '';
    messages.push({ role: 'assistant', content: null, tool_calls: calls });
    for (const call of calls)
      messages.push({ role: 'tool', tool_call_id: call.id, content: toolOutput(step) });
  }
  throw new Error('the loop did not end');
};

const responsesLoop: Loop = async (proxyUrl, streamed) => {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${proxyUrl}/v1`, maxRetries: 0 });
  const tools: OpenAI.Responses.Tool[] = [
    { type: 'function', name: 'probe', parameters: { type: 'object', properties: {} }, strict: false },
  ];
  const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: PROMPT }];
  for (let step = 0; step < MAX_STEPS; step++) {
    const params = { model: 'gpt-4o', instructions: SYSTEM, input, tools };
    const response = streamed
      ? await client.responses.stream(params).finalResponse()
      : await client.responses.create(params);
    const calls = (response.output as OpenAI.Responses.ResponseOutputItem[]).filter(
      (item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call',
    );
    if (calls.length === 0) return response.output_text;
    for (const call of calls) {
      input.push({
        type: 'function_call',
        call_id: call.call_id,
        name: call.name,
        arguments: call.arguments,
      });
      input.push({ type: 'function_call_output', call_id: call.call_id, output: toolOutput(step) });
    }
  }
  throw new Error('the loop did not end');
};

const anthropicLoop: Loop = async (proxyUrl, streamed) => {
  const client = new Anthropic({ apiKey: KEY, baseURL: proxyUrl, maxRetries: 0 });
  const tools: Anthropic.Tool[] = [{ name: 'probe', input_schema: { type: 'object', properties: {} } }];
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: PROMPT }];
  for (let step = 0; step < MAX_STEPS; step++) {
    const params = { model: 'claude-sonnet-4-5', max_tokens: 512, system: SYSTEM, messages, tools };
    const message = streamed
      ? await client.messages.stream(params).finalMessage()
      : await client.messages.create(params);
    if (!answerToolUses(messages, message, toolOutput(step)))
      return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  }
  throw new Error('the loop did not end');
};

const LOOPS: Record<string, Loop> = {
  'openai chat.completions': chatLoop,
  'openai responses': responsesLoop,
  'anthropic messages': anthropicLoop,
};

describe('the Node SDKs through the proxy: a long tool loop', () => {
  for (const [name, loop] of Object.entries(LOOPS)) {
    for (const streamed of [false, true]) {
      it(`${name}${streamed ? ', streamed' : ''}: every request under the window, pairs intact, one session`, async () => {
        running = await startProxiedProvider(
          reusedIdLoop({ tool: 'probe', idFor: (step) => `call_${step}` }),
        );
        const answer = await loop(running.proxy.url, streamed);
        expect(answer).toBe(`Done after ${STEPS} steps.`);
        const { provider, manager, logs } = running;
        // An Anthropic request counted with gpt-4o's tokenizer is an estimate, calibrated by the
        // usage the provider reports: what it reports is what it would refuse.
        const measure = name.startsWith('anthropic') ? 'reported' : 'manager';
        expect(requestViolations(provider, manager, measure)).toEqual([]);
        // The raw history outgrew the window several times over: the proxy compacted it again
        // and again, each time resuming the session's view (the count before compacting stays
        // near the window while the client's history grows without bound).
        expect(logs.filter((entry) => entry.applied === true).length).toBeGreaterThanOrEqual(2);
        expect(Math.max(...logs.map((entry) => entry.tokensBefore ?? 0))).toBeLessThan(2 * WINDOW);
        // No header: one session, found from the history's opening, every call.
        const sessions = new Set(logs.map((entry) => entry.session));
        expect(sessions.size).toBe(1);
        expect(logs.every((entry) => entry.sessionFrom === 'fingerprint')).toBe(true);
        const session = [...sessions][0]!;
        expect(session).toMatch(/^fp-[0-9a-f]{32}$/);
        // After the first call each body was read from what is new: the messages it repeats
        // were taken from the call before (all but the newest one or two: Anthropic's SDK loop
        // resends the last message unchanged, its cache mark aside).
        for (const entry of logs.slice(1))
          expect(entry.reused).toBeGreaterThanOrEqual(logs[logs.indexOf(entry) - 1]!.reused ?? 0);
        expect(logs.at(-1)!.reused).toBeGreaterThan(2 * STEPS - 4);
        // The provider's usage was read from the answer (streamed or not) and recorded.
        expect(manager.lastReportedUsage(session)?.inputTokens).toBeGreaterThan(0);
        // The client's key reached the provider.
        const auth = provider.requests.map((r) => r.headers.authorization ?? r.headers['x-api-key']);
        expect(auth.every((value) => value === KEY || value === `Bearer ${KEY}`)).toBe(true);
      });
    }
  }
});
