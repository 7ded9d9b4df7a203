/**
 * A structured-output schema is part of the prompt (OpenAI puts `response_format` / `text.format`
 * into it, Anthropic `output_format`), so it must be counted with the tools. Before, only tools
 * and the system prompt were: with a schema of about a third of the window, every path below
 * sent requests over the window (by `checkSoundRequest`'s count, which now counts the schema
 * too). Each path runs a tool loop through the real SDK over the loopback server, every
 * request asking for a structured reply, and every request is checked.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import {
  Agent,
  tool as agentTool,
  handoff,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
} from '@openai/agents';
import { tool as aiTool, generateText, Output, stepCountIs, wrapLanguageModel } from 'ai';
import { createAgent, tool as lcTool } from 'langchain';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compactionMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { compactionMiddleware as langchainMiddleware } from '../../src/adapters/langchain/index.js';
import { compactionInputFilter } from '../../src/adapters/openai-agents/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { startProxy } from '../../src/proxy/index.js';
import { checkSoundRequest } from '../../src/testing/assert-sound-request.js';
import { cli } from '../support/cli-fixtures.js';
import {
  chatForm,
  compactForm,
  Ledger,
  type LoopScript,
  loopServer,
  SUMMARY_KEY,
  TOOL,
  userText,
  WINDOW,
} from '../support/sound-paths.js';

const STEPS = 30;
const REPLY = Math.floor(WINDOW / 10);
const SYSTEM = 'You are an SRE agent. Probe every host, then report in the schema.';

/** A report schema of about a third of the window: sixty described fields. */
const report = z.object(
  Object.fromEntries(
    Array.from({ length: 60 }, (_, k) => [
      `host_${k}_status`,
      z
        .string()
        .describe(
          `The status of host web-${k} after the probe: ok, degraded or down, with the latency seen, the queue depth and the replica lag of shard ${k}`,
        ),
    ]),
  ),
);
const SCHEMA = z.toJSONSchema(report) as Record<string, unknown>;

const sizes = {
  outputTokens: Array.from({ length: STEPS }, (_, k) => Math.round(((1 + (k % 6)) * WINDOW) / 100)),
  noteTokens: Array.from({ length: STEPS }, () => 0),
};

type Drive = (url: string, manager: CompactManager, script: LoopScript, session: string) => Promise<void>;

/** Runs `drive` against the loopback model, then checks every request it sent. */
async function runPath(path: string, drive: Drive, model = 'gpt-4o') {
  // The CLI's manager signs with the default key (the key file), not the test's.
  const keys = path.startsWith('cli') ? { keys: 'default' as const } : {};
  const ledger = new Ledger();
  const { server, script } = await loopServer(sizes);
  const manager = new CompactManager({ model, maxContextTokens: WINDOW, summaryKeys: SUMMARY_KEY });
  ledger.listen(path, manager);
  const session = `${path}-schema`;
  try {
    // The scripted model's last answer is plain text, not the report: a parse failure after
    // the loop is the SDK's, the requests before it are what is checked.
    await drive(server.url, manager, script, session).catch(() => undefined);
  } finally {
    await manager.shutdown();
    await server.close();
  }
  for (const request of server.requests) {
    const given = script.givenAt.get(request.seq);
    if (given)
      ledger.check(path, request, compactForm(given, SYSTEM), { sessionId: session, model, ...keys });
  }
  return { run: ledger.of(path), requests: server.requests };
}

const aiTools = (script: LoopScript) => ({
  [TOOL]: aiTool({
    description: 'Probe the next host',
    inputSchema: z.object({ step: z.number() }),
    execute: async ({ step }) => script.output(step),
  }),
});

async function chatLoop(
  baseURL: string,
  script: LoopScript,
  body: (messages: unknown[]) => Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<void> {
  const openai = new OpenAI({ apiKey: 'test-key', baseURL, maxRetries: 0, defaultHeaders: headers });
  for (let step = 0; step <= STEPS; step++) {
    const reply = await openai.chat.completions.create(
      body([{ role: 'system', content: SYSTEM }, ...chatForm(script.turns)]) as never,
    );
    if (!(reply as OpenAI.ChatCompletion).choices[0]?.message.tool_calls?.length) break;
  }
}

const CHAT_FORMAT = { type: 'json_schema', json_schema: { name: 'report', strict: true, schema: SCHEMA } };

const PATHS: Record<string, Drive> = {
  'ai-sdk: generateText with output': async (url, manager, script, session) => {
    const prompt = userText('ai output', 40);
    script.startRun(prompt, STEPS);
    const provider = createOpenAI({ baseURL: `${url}/v1`, apiKey: 'test-key' });
    await generateText({
      model: wrapLanguageModel({
        model: provider.chat('gpt-4o'),
        middleware: compactionMiddleware(manager, { sessionId: session }),
      }),
      system: SYSTEM,
      tools: aiTools(script),
      output: Output.object({ schema: report }),
      messages: [{ role: 'user', content: prompt }],
      maxOutputTokens: REPLY,
      stopWhen: stepCountIs(STEPS + 5),
    });
  },
  'agents: input filter with outputType': (url, manager, script, session) =>
    agentsLoop(url, manager, script, session, { outputType: report }),
  // Each handoff is sent as a function tool; its input schema is a third of the window.
  'agents: input filter with handoffs': (url, manager, script, session) =>
    agentsLoop(url, manager, script, session, {
      handoffs: [
        handoff(new Agent({ name: 'reporter', instructions: 'Write the report.' }), {
          inputType: report,
          onHandoff: () => {},
        }),
      ],
    }),
  'langchain: createAgent with responseFormat': async (url, manager, script, session) => {
    const prompt = userText('langchain output', 40);
    script.startRun(prompt, STEPS);
    const probe = lcTool(async ({ step }: { step: number }) => script.output(step), {
      name: TOOL,
      description: 'Probe the next host',
      schema: z.object({ step: z.number() }),
    });
    const agent = createAgent({
      model: new ChatOpenAI({
        model: 'gpt-4o',
        apiKey: 'test-key',
        maxRetries: 0,
        maxTokens: REPLY,
        configuration: { baseURL: `${url}/v1` },
      }),
      tools: [probe],
      systemPrompt: SYSTEM,
      responseFormat: report,
      middleware: [langchainMiddleware(manager, { sessionId: session })],
    });
    await agent.invoke({ messages: [{ role: 'user', content: prompt }] }, { recursionLimit: 500 });
  },
  'proxy: chat response_format': async (url, manager, script, session) => {
    script.startRun(userText('proxy chat', 40), STEPS);
    const proxy = await startProxy({ upstream: url, manager, port: 0, log: () => {} });
    try {
      await chatLoop(
        `${proxy.url}/v1`,
        script,
        (messages) => ({ model: 'gpt-4o', messages, max_tokens: REPLY, response_format: CHAT_FORMAT }),
        { 'x-compaction-session': session },
      );
    } finally {
      await proxy.close({ graceMs: 1000 });
    }
  },
  'proxy: responses text.format': async (url, manager, script, session) => {
    script.startRun(userText('proxy responses', 40), STEPS);
    const proxy = await startProxy({ upstream: url, manager, port: 0, log: () => {} });
    const openai = new OpenAI({
      apiKey: 'test-key',
      baseURL: `${proxy.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-compaction-session': session },
    });
    try {
      for (let step = 0; step <= STEPS; step++) {
        const reply = await openai.responses.create({
          model: 'gpt-4o',
          instructions: SYSTEM,
          input: responsesForm(script),
          max_output_tokens: REPLY,
          store: false,
          text: { format: { type: 'json_schema', name: 'report', strict: true, schema: SCHEMA } },
        } as never);
        if (!(reply as OpenAI.Responses.Response).output.some((item) => item.type === 'function_call')) break;
      }
    } finally {
      await proxy.close({ graceMs: 1000 });
    }
  },
};

async function agentsLoop(
  url: string,
  manager: CompactManager,
  script: LoopScript,
  session: string,
  extra: Pick<ConstructorParameters<typeof Agent>[0], 'outputType' | 'handoffs'>,
): Promise<void> {
  const prompt = userText('agents', 40);
  script.startRun(prompt, STEPS);
  setTracingDisabled(true);
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: `${url}/v1` }),
  });
  const probe = agentTool({
    name: TOOL,
    description: 'Probe the next host',
    parameters: {
      type: 'object',
      properties: { step: { type: 'number' } },
      required: ['step'],
      additionalProperties: true,
    },
    strict: false,
    execute: async (input) => script.output((input as { step: number }).step),
  });
  const agent = new Agent({
    name: 'sre',
    instructions: SYSTEM,
    tools: [probe],
    model: 'gpt-4o',
    modelSettings: { maxTokens: REPLY },
    ...extra,
  } as ConstructorParameters<typeof Agent>[0]);
  await runner.run(agent, prompt, {
    callModelInputFilter: compactionInputFilter(manager, { sessionId: session }),
    maxTurns: STEPS + 5,
  });
}

/** The transcript as Responses input items. */
function responsesForm(script: LoopScript): unknown[] {
  return script.turns.map((turn) => {
    if (turn.kind === 'user') return { role: 'user', content: turn.text };
    if (turn.kind === 'answer') return { role: 'assistant', content: turn.text };
    if (turn.kind === 'call')
      return { type: 'function_call', call_id: turn.id, name: TOOL, arguments: JSON.stringify(turn.args) };
    return { type: 'function_call_output', call_id: turn.id, output: turn.output };
  });
}

describe('a structured-output schema is counted with the request', () => {
  it('checkSoundRequest counts the schema of each wire format', () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const window = 1200;
    const plain = checkSoundRequest({ request: { messages }, maxContextTokens: window });
    expect(plain).toEqual([]);
    for (const request of [
      { messages, response_format: CHAT_FORMAT },
      { input: messages, text: { format: { type: 'json_schema', name: 'r', schema: SCHEMA } } },
      { messages, system: 's', output_format: { type: 'json_schema', schema: SCHEMA } },
    ])
      expect(checkSoundRequest({ request, maxContextTokens: window }).map((v) => v.rule)).toEqual([
        'over_window',
      ]);
  });

  it.each(Object.keys(PATHS))('%s', async (path) => {
    const { run } = await runPath(path, PATHS[path]!);
    expect(run.violations).toEqual([]);
    expect(run.requests).toBeGreaterThan(STEPS);
  });

  it('cli: compact of a body with response_format', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'schema-cli-'));
    try {
      const { run } = await runPath('cli: compact', async (url, _manager, script, session) => {
        script.startRun(userText('cli', 40), STEPS);
        const openai = new OpenAI({ apiKey: 'test-key', baseURL: `${url}/v1`, maxRetries: 0 });
        for (let step = 0; step <= STEPS; step++) {
          const input = join(dir, `history-${step}.json`);
          const messages = [{ role: 'system', content: SYSTEM }, ...chatForm(script.turns)];
          const body = { model: 'gpt-4o', messages, max_tokens: REPLY, response_format: CHAT_FORMAT };
          await writeFile(input, JSON.stringify(body));
          const run = await cli([
            'compact',
            input,
            '--max-context',
            String(WINDOW),
            '--state',
            join(dir, 'state.json'),
            '--session-id',
            session,
          ]);
          if (run.code !== 0) throw new Error(`cli compact exited ${run.code}: ${run.stderr}`);
          const sent = JSON.parse(run.stdout) as Record<string, unknown>;
          const reply = await openai.chat.completions.create(sent as never);
          if (!reply.choices[0]?.message.tool_calls?.length) break;
        }
      });
      expect(run.violations).toEqual([]);
      expect(run.requests).toBeGreaterThan(STEPS);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
