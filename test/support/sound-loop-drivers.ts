/**
 * Tool loops of 40+ steps after one user message, run by each SDK itself over the loopback
 * server (issue 43 point 3): the Agents SDK (input filter; session over two runs), the AI SDK
 * (generateText, streamText, prepareStep; Chat or Responses), Anthropic through withCompaction
 * (create, stream) and LangChain createAgent. Every agent request is checked against the
 * transcript the SDK held when it sent it.
 */
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
import { z } from 'zod';
import { compactionMiddleware, compactionPrepareStep } from '../../src/adapters/ai-sdk/index.js';
import { withCompaction } from '../../src/adapters/anthropic/index.js';
import { compactionMiddleware as langchainMiddleware } from '../../src/adapters/langchain/index.js';
import { CompactionSession, compactionInputFilter } from '../../src/adapters/openai-agents/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { Summarizer } from '../../src/core/summary/summarizer.js';
import {
  anthropicForm,
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

const SYSTEM = 'You are an SRE agent. Probe every host before answering; never restart a host.';

/** One run of a loop path. */
export interface LoopCase {
  steps: number;
  sizes: LoopSizes;
  /** The LLM summarizer (over its own loopback server), or the built-in one. */
  summarizer?: Summarizer;
  /** Chat Completions or Responses, for the AI SDK paths. */
  api: 'chat' | 'responses';
  /** Tokens of the one user message (a long paste reaches the cut of oversized messages). */
  promptTokens: number;
  /** The name the ledger counts the run under. @default the path's */
  ledgerPath?: string;
}

function managerFor(model: string, loop: LoopCase): CompactManager {
  return new CompactManager({
    model,
    maxContextTokens: WINDOW,
    summaryKeys: SUMMARY_KEY,
    ...(loop.summarizer ? { summarizer: loop.summarizer } : {}),
  });
}

const schema = z.object({ step: z.number(), note: z.string().optional() });

async function runLoop(
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
    ledger.check(path, request, compactForm(given, SYSTEM), {
      sessionId: session,
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
      await agentsRunner(url).run(agentsAgent(script), prompt, {
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
        await runner.run(agentsAgent(script), prompt, { ...compacting.runOptions(), maxTurns: steps + 5 });
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
        system: SYSTEM,
        tools: aiTools(script),
        providerOptions: RESPONSES_OPTIONS,
        messages: [{ role: 'user', content: prompt }],
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
        system: SYSTEM,
        tools: aiTools(script),
        providerOptions: RESPONSES_OPTIONS,
        messages: [{ role: 'user', content: prompt }],
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
        system: SYSTEM,
        tools: aiTools(script),
        providerOptions: RESPONSES_OPTIONS,
        prepareStep: compactionPrepareStep(manager, { sessionId: session, system: SYSTEM }),
        messages: [{ role: 'user', content: prompt }],
        stopWhen: stepCountIs(loop.steps + 5),
      });
    }),
  'anthropic: create': (ledger, loop) => anthropicLoop('anthropic: create', ledger, loop, false),
  'anthropic: stream': (ledger, loop) => anthropicLoop('anthropic: stream', ledger, loop, true),
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
          configuration: { baseURL: `${url}/v1` },
        }),
        tools: [probe],
        systemPrompt: SYSTEM,
        middleware: [langchainMiddleware(manager, { sessionId: session })],
      });
      await agent.invoke({ messages: [{ role: 'user', content: prompt }] }, { recursionLimit: 500 });
    }),
};

function agentsRunner(url: string): Runner {
  setTracingDisabled(true);
  return new Runner({ modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: `${url}/v1` }) });
}

function agentsAgent(script: LoopScript): Agent {
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
  return new Agent({ name: 'sre', instructions: SYSTEM, tools: [probe], model: 'gpt-4o' });
}

/** The Anthropic loop, driven by the test through a client wrapped by withCompaction. */
function anthropicLoop(path: string, ledger: Ledger, loop: LoopCase, stream: boolean): Promise<void> {
  return runLoop(path, ledger, loop, 'claude-sonnet-4-6', async ({ url, manager, script, session }) => {
    const client = withCompaction(
      new Anthropic({ apiKey: 'test-key', baseURL: url, maxRetries: 0 }),
      manager,
      {
        sessionId: session,
      },
    );
    const tools: Anthropic.Tool[] = [
      { name: TOOL, description: 'Probe the next host', input_schema: { type: 'object', properties: {} } },
    ];
    script.startRun(userText(path, loop.promptTokens), loop.steps);
    for (let step = 0; step <= loop.steps; step++) {
      const params = {
        model: 'claude-sonnet-4-6',
        max_tokens: 512,
        system: SYSTEM,
        messages: anthropicForm(script.turns) as unknown as Anthropic.MessageParam[],
        tools,
      };
      const reply = stream
        ? await client.messages.stream(params).finalMessage()
        : await client.messages.create(params);
      if (!reply.content.some((block) => block.type === 'tool_use')) break;
    }
  });
}
