/**
 * Tool loops of 40+ steps after one user message, run by each SDK itself over the loopback
 * server (issue 43 point 3): the Agents SDK (input filter; session over two runs), the AI SDK
 * (generateText, streamText, prepareStep; Chat or Responses), Anthropic through withCompaction
 * (create, stream) and LangChain createAgent. Every agent request is checked against the
 * transcript the SDK held when it sent it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { ChatOpenAI } from '@langchain/openai';
import {
  Agent,
  tool as agentTool,
  MemorySession,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
} from '@openai/agents';
import { tool as aiTool, generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { createAgent, tool as lcTool } from 'langchain';
import OpenAI from 'openai';
import { z } from 'zod';
import { compactionMiddleware, compactionPrepareStep } from '../../src/adapters/ai-sdk/index.js';
import { compactThreadHistory, withCompaction } from '../../src/adapters/anthropic/index.js';
import { compactionMiddleware as langchainMiddleware } from '../../src/adapters/langchain/index.js';
import { CompactionSession, compactionInputFilter } from '../../src/adapters/openai-agents/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { Summarizer } from '../../src/core/summary/summarizer.js';
import { cli } from './cli-fixtures.js';
import {
  anthropicForm,
  chatForm,
  compactForm,
  type Ledger,
  type LoopScript,
  type LoopSizes,
  loopServer,
  SUMMARY_KEY,
  TOOL,
  userText,
  WINDOW,
} from './sound-paths.js';

export const SYSTEM = 'You are an SRE agent. Probe every host before answering; never restart a host.';

/**
 * The reply every agent request asks for, more than the manager's buffer (a tenth of the
 * window): providers refuse a prompt that passes the window with it, and the checker counts it.
 */
export const REPLY = Math.floor(WINDOW * 0.15);

/** One run of a loop path. */
export interface LoopCase {
  steps: number;
  sizes: LoopSizes;
  /** The LLM summarizer (over its own loopback server), or the built-in one. */
  summarizer?: Summarizer;
  /** Chat Completions or Responses, for the AI SDK and LangChain paths. */
  api: 'chat' | 'responses';
  /** Tokens of the one user message (a long paste reaches the cut of oversized messages). */
  promptTokens: number;
  /** The name the ledger counts the run under. @default the path's */
  ledgerPath?: string;
  /** The policy preset of the run's manager. @default 'default' */
  preset?: 'default' | 'quality';
  /** The reply every agent request asks for (the CLI's requests ask for none). @default REPLY */
  replyTokens?: number;
  /** The system prompt (a large one leaves the newest little room beside the summary). @default SYSTEM */
  system?: string;
}

/** The system prompt of a loop. */
export const systemOf = (loop: LoopCase): string => loop.system ?? SYSTEM;

function managerFor(model: string, loop: LoopCase): CompactManager {
  return new CompactManager({
    model,
    maxContextTokens: WINDOW,
    summaryKeys: SUMMARY_KEY,
    ...(loop.summarizer ? { summarizer: loop.summarizer } : {}),
    ...(loop.preset ? { policy: { preset: loop.preset } } : {}),
  });
}

const schema = z.object({ step: z.number(), note: z.string().optional() });

export async function runLoop(
  path: string,
  ledger: Ledger,
  loop: LoopCase,
  model: string,
  drive: (context: {
    url: string;
    manager: CompactManager;
    script: LoopScript;
    session: string;
  }) => Promise<void>,
): Promise<void> {
  path = loop.ledgerPath ?? path;
  const { server, script } = await loopServer(loop.sizes);
  const manager = managerFor(model, loop);
  ledger.listen(path, manager);
  const session = `${path}-${ledger.of(path).requests}`;
  let failure: unknown;
  try {
    await drive({ url: server.url, manager, script, session });
  } catch (error) {
    failure = error;
  } finally {
    await manager.shutdown();
    await server.close();
  }
  // The requests sent before a failure are checked too.
  for (const request of server.requests) {
    const given = script.givenAt.get(request.seq);
    if (!given) continue;
    ledger.steps++;
    ledger.check(path, request, compactForm(given, systemOf(loop)), {
      sessionId: session,
      // The CLI's manager signs with the default key (the key file), not the test's.
      ...(path.startsWith('cli') ? { keys: 'default' as const } : {}),
      model,
      reported: model.startsWith('claude'),
      note: loop.api,
    });
  }
  if (failure) throw failure;
}

function aiTools(script: LoopScript) {
  return {
    [TOOL]: aiTool({
      description: 'Probe the next host',
      inputSchema: schema,
      execute: async ({ step }) => script.output(step),
    }),
  };
}

function aiModel(url: string, api: LoopCase['api']) {
  const provider = createOpenAI({ baseURL: `${url}/v1`, apiKey: 'test-key' });
  return api === 'chat' ? provider.chat('gpt-4o') : provider.responses('gpt-4o');
}

const RESPONSES_OPTIONS = { openai: { store: false } };

/** The loop paths, by name. */
export const LOOP_PATHS: Record<string, (ledger: Ledger, loop: LoopCase) => Promise<void>> = {
  'agents: input filter': (ledger, loop) =>
    runLoop('agents: input filter', ledger, loop, 'gpt-4o', async ({ url, manager, script, session }) => {
      const prompt = userText('agents filter', loop.promptTokens);
      script.startRun(prompt, loop.steps);
      await agentsRunner(url).run(agentsAgent(script, loop), prompt, {
        callModelInputFilter: compactionInputFilter(manager, { sessionId: session }),
        maxTurns: loop.steps + 5,
      });
    }),
  'agents: session': (ledger, loop) =>
    runLoop('agents: session', ledger, loop, 'gpt-4o', async ({ url, manager, script, session }) => {
      const compacting = new CompactionSession({ session: new MemorySession(), manager, sessionId: session });
      const runner = agentsRunner(url);
      for (const [k, steps] of [loop.steps, 6].entries()) {
        const prompt = userText(`agents session run ${k}`, loop.promptTokens);
        script.startRun(prompt, steps);
        await runner.run(agentsAgent(script, loop), prompt, {
          ...compacting.runOptions(),
          maxTurns: steps + 5,
        });
      }
    }),
  'ai-sdk: generateText': (ledger, loop) =>
    runLoop('ai-sdk: generateText', ledger, loop, 'gpt-4o', async ({ url, manager, script, session }) => {
      const prompt = userText('ai generate', loop.promptTokens);
      script.startRun(prompt, loop.steps);
      await generateText({
        model: wrapLanguageModel({
          model: aiModel(url, loop.api),
          middleware: compactionMiddleware(manager, { sessionId: session }),
        }),
        system: systemOf(loop),
        tools: aiTools(script),
        providerOptions: RESPONSES_OPTIONS,
        messages: [{ role: 'user', content: prompt }],
        maxOutputTokens: loop.replyTokens ?? REPLY,
        stopWhen: stepCountIs(loop.steps + 5),
      });
    }),
  'ai-sdk: streamText': (ledger, loop) =>
    runLoop('ai-sdk: streamText', ledger, loop, 'gpt-4o', async ({ url, manager, script, session }) => {
      const prompt = userText('ai stream', loop.promptTokens);
      script.startRun(prompt, loop.steps);
      const result = streamText({
        model: wrapLanguageModel({
          model: aiModel(url, loop.api),
          middleware: compactionMiddleware(manager, { sessionId: session }),
        }),
        system: systemOf(loop),
        tools: aiTools(script),
        providerOptions: RESPONSES_OPTIONS,
        messages: [{ role: 'user', content: prompt }],
        maxOutputTokens: loop.replyTokens ?? REPLY,
        stopWhen: stepCountIs(loop.steps + 5),
      });
      await result.consumeStream();
      await result.text;
    }),
  'ai-sdk: prepareStep': (ledger, loop) =>
    runLoop('ai-sdk: prepareStep', ledger, loop, 'gpt-4o', async ({ url, manager, script, session }) => {
      const prompt = userText('ai prepareStep', loop.promptTokens);
      script.startRun(prompt, loop.steps);
      await generateText({
        model: aiModel(url, loop.api),
        system: systemOf(loop),
        tools: aiTools(script),
        providerOptions: RESPONSES_OPTIONS,
        prepareStep: compactionPrepareStep(manager, {
          sessionId: session,
          system: systemOf(loop),
          replyTokens: loop.replyTokens ?? REPLY,
        }),
        messages: [{ role: 'user', content: prompt }],
        maxOutputTokens: loop.replyTokens ?? REPLY,
        stopWhen: stepCountIs(loop.steps + 5),
      });
    }),
  'anthropic: create': (ledger, loop) => anthropicLoop('anthropic: create', ledger, loop, 'create'),
  'anthropic: stream': (ledger, loop) => anthropicLoop('anthropic: stream', ledger, loop, 'stream'),
  'anthropic: compactThreadHistory (manager)': (ledger, loop) =>
    anthropicLoop('anthropic: compactThreadHistory (manager)', ledger, loop, 'thread'),
  'cli: compact': (ledger, loop) => cliLoop(ledger, loop),
  'langchain: createAgent': (ledger, loop) =>
    runLoop('langchain: createAgent', ledger, loop, 'gpt-4o', async ({ url, manager, script, session }) => {
      const prompt = userText('langchain', loop.promptTokens);
      script.startRun(prompt, loop.steps);
      const probe = lcTool(async ({ step }: { step: number }) => script.output(step), {
        name: TOOL,
        description: 'Probe the next host',
        schema,
      });
      const agent = createAgent({
        model: new ChatOpenAI({
          model: 'gpt-4o',
          apiKey: 'test-key',
          maxRetries: 0,
          maxTokens: loop.replyTokens ?? REPLY,
          // Responses: an AI message goes back as the output items it came with, unless rebuilt.
          useResponsesApi: loop.api === 'responses',
          configuration: { baseURL: `${url}/v1` },
        }),
        tools: [probe],
        systemPrompt: systemOf(loop),
        middleware: [langchainMiddleware(manager, { sessionId: session })],
      });
      await agent.invoke({ messages: [{ role: 'user', content: prompt }] }, { recursionLimit: 500 });
    }),
};

function agentsRunner(url: string): Runner {
  setTracingDisabled(true);
  return new Runner({ modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: `${url}/v1` }) });
}

function agentsAgent(script: LoopScript, loop: LoopCase): Agent {
  const probe = agentTool({
    name: TOOL,
    description: 'Probe the next host',
    parameters: {
      type: 'object',
      properties: { step: { type: 'number' }, note: { type: 'string' } },
      required: ['step'],
      additionalProperties: true,
    },
    strict: false,
    execute: async (input) => script.output((input as { step: number }).step),
  });
  return new Agent({
    name: 'sre',
    instructions: systemOf(loop),
    tools: [probe],
    model: 'gpt-4o',
    modelSettings: { maxTokens: loop.replyTokens ?? REPLY },
  });
}

/** The Anthropic loop, driven by the test: through withCompaction, or compactThreadHistory then a plain client. */
function anthropicLoop(
  path: string,
  ledger: Ledger,
  loop: LoopCase,
  how: 'create' | 'stream' | 'thread',
): Promise<void> {
  return runLoop(path, ledger, loop, 'claude-sonnet-4-6', async ({ url, manager, script, session }) => {
    const plain = new Anthropic({ apiKey: 'test-key', baseURL: url, maxRetries: 0 });
    const client = withCompaction(plain, manager, { sessionId: session });
    const tools: Anthropic.Tool[] = [
      { name: TOOL, description: 'Probe the next host', input_schema: { type: 'object', properties: {} } },
    ];
    script.startRun(userText(path, loop.promptTokens), loop.steps);
    for (let step = 0; step <= loop.steps; step++) {
      let messages = anthropicForm(script.turns) as Anthropic.MessageParam[];
      if (how === 'thread')
        messages = (
          await compactThreadHistory({
            manager,
            sessionId: session,
            threadHistory: messages,
            systemPrompt: systemOf(loop),
            tools,
            replyTokens: loop.replyTokens ?? REPLY,
          })
        ).messages;
      const params = {
        model: 'claude-sonnet-4-6',
        max_tokens: loop.replyTokens ?? REPLY,
        system: systemOf(loop),
        messages,
        tools,
      };
      const given = JSON.stringify(params);
      const reply =
        how === 'stream'
          ? await client.messages.stream(params).finalMessage()
          : await (how === 'thread' ? plain : client).messages.create(params);
      // The caller's params are never mutated (their messages least of all).
      // With a plain client the caller records the usage (docs/integrations.md): it calibrates the count.
      if (how === 'thread') manager.recordUsage(session, { inputTokens: reply.usage.input_tokens });
      if (JSON.stringify(params) !== given)
        ledger.of(loop.ledgerPath ?? path).violations.push(`step ${step}: the caller's params were mutated`);
      if (!reply.content.some((block) => block.type === 'tool_use')) break;
    }
  });
}

/** The CLI's `compact` in a loop: each step's history compacted with a state file, sent with the OpenAI client. */
function cliLoop(ledger: Ledger, loop: LoopCase): Promise<void> {
  const path = 'cli: compact';
  return runLoop(path, ledger, loop, 'gpt-4o', async ({ url, script, session }) => {
    const dir = await mkdtemp(join(tmpdir(), 'sound-cli-loop-'));
    const openai = new OpenAI({ apiKey: 'test-key', baseURL: `${url}/v1`, maxRetries: 0 });
    try {
      script.startRun(userText(path, loop.promptTokens), loop.steps);
      for (let step = 0; step <= loop.steps; step++) {
        const input = join(dir, `history-${step}.json`);
        const report = join(dir, `report-${step}.json`);
        await writeFile(
          input,
          JSON.stringify([{ role: 'system', content: systemOf(loop) }, ...chatForm(script.turns)]),
        );
        // The CLI's manager is its own: its session id is the one checked, its levels come from --report.
        const run = await cli([
          'compact',
          input,
          '--max-context',
          String(WINDOW),
          '--model',
          'gpt-4o',
          '--state',
          join(dir, 'state.json'),
          '--session-id',
          session,
          '--report',
          report,
        ]);
        if (run.code !== 0) throw new Error(`cli compact exited ${run.code}: ${run.stderr}`);
        ledger.countResult(loop.ledgerPath ?? path, JSON.parse(await readFile(report, 'utf8')));
        const reply = await openai.chat.completions.create({
          model: 'gpt-4o',
          messages: JSON.parse(run.stdout) as never,
        });
        if (!reply.choices[0]?.message.tool_calls?.length) break;
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
