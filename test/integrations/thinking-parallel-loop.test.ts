/**
 * A 45-step Anthropic tool loop through withCompaction, as an extended-thinking agent runs it:
 * each reply opens with a signed thinking block and makes one to three parallel tool_use
 * calls (every fifth with a 9,000-character input), results carry screenshots now and then,
 * the task carries an image. Every request the SDK sent is checked: sound (checkSoundRequest:
 * pairs, the newest message as given, one trusted summary, nothing foreign, within the window),
 * the tool_result blocks first in their user turn, and the assistant turn the loop continues
 * from opens with its thinking block, as the API demands when thinking is on. Then the same
 * loop in the Agents SDK over a reasoning model (Responses): a reasoning item never sent
 * without the item it precedes, nor a function_call without its reasoning item.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { withCompaction } from '../../src/adapters/anthropic/index.js';
import { compactionInputFilter } from '../../src/adapters/openai-agents/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import {
  checkSoundRequest,
  type ProviderTestServer,
  responsesBody,
  startProviderTestServer,
} from '../../src/testing/index.js';
import { pngBytes } from '../support/test-images.js';

/** The cascade levels each loop must reach. */
const EVERY_LEVEL = ['clear_tool_results', 'cut_oversized', 'shorten_arguments', 'summarize'];

setTracingDisabled(true);

const WINDOW = 8_000;
const STEPS = 45;
const MODEL = 'claude-sonnet-4-6';
const PNG = pngBytes(16, 16).toString('base64');
const image = {
  type: 'image' as const,
  source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG },
};

type Block = Record<string, unknown> & { type: string };

/** The scripted model's reply to its `n`th request. */
function reply(n: number): Record<string, unknown> {
  const calls = n % 3 === 0 ? 3 : n % 2 === 0 ? 2 : 1;
  const content: Block[] = [
    {
      type: 'thinking',
      thinking: `Step ${n}: probe the next hosts. ${'reason '.repeat(40)}`,
      signature: `sig-${n}`,
    },
  ];
  if (n < STEPS) {
    for (let i = 0; i < calls; i++) {
      const note = n % 5 === 0 ? 'x'.repeat(9_000) : 'short';
      content.push({
        type: 'tool_use',
        id: `toolu_${n}_${i}`,
        name: 'probe',
        input: { host: `h${n}-${i}`, note },
      });
    }
  } else content.push({ type: 'text', text: 'All hosts probed.' });
  const stop = n < STEPS ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: 100, output_tokens: 10 };
  return {
    id: `msg_${n}`,
    type: 'message',
    role: 'assistant',
    model: MODEL,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage,
  };
}

/** What the Messages API itself refuses beyond the sound-request rules, for one request. */
function messagesApiProblems(messages: { role: string; content: string | Block[] }[]): string[] {
  const problems: string[] = [];
  if (messages[0]?.role !== 'user') problems.push('the first message is not a user turn');
  messages.forEach((message, k) => {
    const blocks = typeof message.content === 'string' ? [] : message.content;
    const firstOther = blocks.findIndex((block) => block.type !== 'tool_result');
    if (firstOther >= 0 && blocks.slice(firstOther).some((block) => block.type === 'tool_result'))
      problems.push(`messages[${k}]: a tool_result after other content`);
  });
  const last = messages.at(-1);
  const before = messages.at(-2);
  const continues =
    typeof last?.content !== 'string' && last?.content.some((block) => block.type === 'tool_result');
  if (continues && before?.role === 'assistant') {
    const first = typeof before.content === 'string' ? undefined : before.content[0]?.type;
    if (first !== 'thinking') problems.push(`the assistant turn the loop continues opens with ${first}`);
  }
  return problems;
}

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('an extended-thinking Anthropic tool loop with parallel calls and images', () => {
  it('sends every request sound, within the window, thinking first, through every cascade level', async () => {
    let seq = 0;
    server = await startProviderTestServer({ handler: () => ({ json: reply(++seq) }) });
    const manager = new CompactManager({ model: MODEL, maxContextTokens: WINDOW });
    const levels = new Set<string>();
    manager.on('compact.reduction', (event) => {
      levels.add(String((event.properties as { level?: unknown }).level));
    });
    const anthropic = withCompaction(
      new Anthropic({ baseURL: server.anthropicBaseURL, apiKey: 'test', maxRetries: 0 }),
      manager,
      { sessionId: 'sre' },
    );
    const tools = [
      {
        name: 'probe',
        description: 'Probe a host',
        input_schema: {
          type: 'object' as const,
          properties: { host: { type: 'string' }, note: { type: 'string' } },
        },
      },
    ];
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'Probe every host on this map.' }, image] },
    ];
    const given: Anthropic.MessageParam[][] = [];
    for (let turn = 0; turn < STEPS; turn++) {
      given.push(structuredClone(history));
      const message = await anthropic.messages.create({
        model: MODEL,
        max_tokens: 1024,
        system: 'You are an SRE agent. Never restart a host.',
        thinking: { type: 'enabled', budget_tokens: 512 },
        messages: history,
        tools,
      });
      history.push({ role: 'assistant', content: message.content as Anthropic.ContentBlockParam[] });
      const uses = message.content.filter((block) => block.type === 'tool_use');
      if (uses.length === 0) break;
      history.push({
        role: 'user',
        content: uses.map((use, i) => ({
          type: 'tool_result' as const,
          tool_use_id: use.id,
          content:
            i === 0 && turn % 4 === 0
              ? [
                  {
                    type: 'text' as const,
                    text: `screenshot of ${String((use.input as { host: string }).host)}`,
                  },
                  image,
                ]
              : `${String((use.input as { host: string }).host)}: up. ${'log line '.repeat(150)}`,
        })),
      });
    }
    expect(server.requests).toHaveLength(STEPS);
    const problems = server.requests.flatMap((request, i) => {
      const body = request.body as { messages: { role: string; content: string | Block[] }[] };
      const violations = checkSoundRequest({
        request: body,
        given: given[i]!,
        sessionId: 'sre',
        maxContextTokens: WINDOW,
        model: MODEL,
      }).map((violation) => `${violation.rule}: ${violation.message.slice(0, 160)}`);
      return [...violations, ...messagesApiProblems(body.messages)].map(
        (problem) => `request ${i + 1}: ${problem}`,
      );
    });
    expect(problems).toEqual([]);
    expect([...levels].sort()).toEqual(EVERY_LEVEL);
    await manager.shutdown();
  });
});

describe('an Agents SDK run over a reasoning model with parallel calls', () => {
  it('keeps each reasoning item with the item it precedes and every call with its output', async () => {
    let seq = 0;
    server = await startProviderTestServer({
      handler: (request) => {
        const n = ++seq;
        const body = responsesBody({ text: '' }, request);
        const calls = n % 3 === 0 ? 3 : n % 2 === 0 ? 2 : 1;
        const summary = [{ type: 'summary_text', text: `Step ${n}: ${'think '.repeat(30)}` }];
        const output: Record<string, unknown>[] = [
          { type: 'reasoning', id: `rs_${n}`, summary, encrypted_content: `enc_${n}_${'Z'.repeat(400)}` },
        ];
        for (let i = 0; n < STEPS && i < calls; i++) {
          const note = n % 5 === 0 ? 'note '.repeat(700) : 'short';
          const args = JSON.stringify({ host: `h${n}-${i}`, note });
          output.push({
            type: 'function_call',
            id: `fc_${n}_${i}`,
            call_id: `call_${n}_${i}`,
            name: 'probe',
            arguments: args,
            status: 'completed',
          });
        }
        if (n >= STEPS) {
          const content = [{ type: 'output_text', text: 'done', annotations: [] }];
          output.push({ type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content });
        }
        return { json: { ...body, output } };
      },
    });
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    const levels = new Set<string>();
    manager.on('compact.reduction', (event) => {
      levels.add(String((event.properties as { level?: unknown }).level));
    });
    const probe = tool({
      name: 'probe',
      description: 'Probe a host',
      parameters: z.object({ host: z.string(), note: z.string() }),
      execute: async ({ host }) => `${host}: up. ${'log line '.repeat(150)}`,
    });
    const agent = new Agent({
      name: 'sre',
      instructions: 'You are an SRE agent.',
      tools: [probe],
      model: 'o4-mini',
    });
    const provider = new OpenAIProvider({
      apiKey: 'test',
      baseURL: server.openaiBaseURL,
      useResponses: true,
    });
    await new Runner({ modelProvider: provider }).run(agent, 'Probe every host.', {
      maxTurns: STEPS + 5,
      callModelInputFilter: compactionInputFilter(manager, { sessionId: 'sre' }),
    });
    expect(server.requests).toHaveLength(STEPS);
    const problems = server.requests.flatMap((request, i) => {
      const body = request.body as { input: Record<string, unknown>[]; instructions?: string };
      const found = checkSoundRequest({ request: body, sessionId: 'sre', maxContextTokens: WINDOW }).map(
        (violation) => `${violation.rule}: ${violation.message.slice(0, 160)}`,
      );
      const ids = new Set(body.input.map((item) => item.id));
      body.input.forEach((item, k) => {
        const next = body.input[k + 1];
        if (item.type === 'reasoning' && next?.type !== 'function_call' && next?.role !== 'assistant')
          found.push(`${String(item.id)} is not followed by the item it precedes`);
        const step = String(item.id).split('_')[1];
        if (item.type === 'function_call' && !ids.has(`rs_${step}`))
          found.push(`${String(item.id)} is sent without its reasoning item rs_${step}`);
      });
      return found.map((problem) => `request ${i + 1}: ${problem}`);
    });
    expect(problems).toEqual([]);
    expect([...levels].sort()).toEqual(EVERY_LEVEL);
    await manager.shutdown();
  });
});
