/**
 * What each SDK integration adds to a warm agent loop (issue 28 point 6), printed by
 * `npm run bench` (`--no-sdk` skips it; `npx tsx bench/sdk-overhead.ts` runs it alone,
 * `--quick` without the 4,000-message size).
 *
 * Every integration runs against the loopback provider server (`startProviderTestServer`,
 * in this process) with the real SDK packages: the AI SDK (`generateText` over
 * `@ai-sdk/openai` chat), the OpenAI Agents SDK (`Runner` over `OpenAIProvider`, Responses),
 * the Anthropic SDK (`messages.create`) and LangChain.js (`createAgent` over `ChatOpenAI`).
 * A synthetic coding session of 250 / 1,000 / 4,000 messages (~340 tokens each, converted to
 * each SDK's message type) is the history; each call appends a user message, makes one model
 * call (the server answers with text) and keeps the reply, as an agent loop does.
 *
 * For each integration and size, in one run and interleaved call by call: the SDK alone, and
 * the SDK with the integration, its manager's window so large that nothing ever triggers
 * (the warm per-call overhead of a preflight that keeps everything). The Agents SDK also runs
 * with a do-nothing `callModelInputFilter` (the SDK's own cost of any filter: it clones and
 * matches every input item again), and through a `CompactionSession` without a filter beside
 * a plain `MemorySession` (the alternative that avoids the filter cost, compacting between
 * runs only). Median wall time per call after warm-up calls; a full GC runs before each
 * timed call so one variant's garbage is not collected during another's. The compaction
 * filter is also timed from inside (the library's own share, beside the SDK's filter cost).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import * as langChainClasses from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import {
  Agent,
  type AgentInputItem,
  tool as agentTool,
  type CallModelInputFilter,
  MemorySession,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
} from '@openai/agents';
import { tool as aiTool, generateText, type ModelMessage, type ToolSet, wrapLanguageModel } from 'ai';
import { createAgent, tool as langChainTool } from 'langchain';
import { z } from 'zod';
import { compactionMiddleware as aiSdkMiddleware, chatToAiSdk } from '../src/adapters/ai-sdk/index.js';
import { withCompaction } from '../src/adapters/anthropic/index.js';
import {
  chatToLangChain,
  compactionMiddleware as langChainMiddleware,
} from '../src/adapters/langchain/index.js';
import { CompactionSession, compactionInputFilter } from '../src/adapters/openai-agents/index.js';
import { CompactManager } from '../src/index.js';
import { type ProviderTestServer, startProviderTestServer } from '../src/testing/provider-test-server.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;

/** Nothing triggers: the warm per-call overhead of a preflight that keeps every message. */
const NO_TRIGGER_WINDOW = 2_000_000_000;
const TOOL_NAMES = ['read_file', 'run_tests', 'edit_file', 'grep'] as const;
const TOOL_DESCRIPTION = 'Operate on a file of the repository';

export interface ChatMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** A coding session of about `count` messages (~340 tokens each), ending on the assistant's answer. */
function chatHistory(count: number): { system: string; messages: ChatMessage[] } {
  const all: ChatMessage[] = [];
  for (let part = 0; all.length < count + 2; part++) {
    const chunk = syntheticSession({ turns: 200, seed: 3 + part, toolDensity: 3, resultChars: 3_300 });
    all.push(...(chunk as unknown as ChatMessage[]));
  }
  const pinned = all.filter((m) => m.role === 'system' || m.role === 'developer');
  const system = [...new Set(pinned.map((m) => m.content))].join('\n\n');
  const turns = all.filter((m) => m.role !== 'system' && m.role !== 'developer');
  let end = count;
  while (end > 1 && turns[end]?.role !== 'user') end--;
  return { system, messages: turns.slice(0, end) };
}

let userTurn = 0;
const nextUserText = () => `follow-up ${userTurn++}: please check src/auth/token.ts again and run the tests`;

/** One agent loop: `call()` appends a user message, calls the model once and keeps the reply. */
interface Variant {
  label: string;
  call(): Promise<void>;
}

/** One row of the table: the SDK alone against the same SDK with something added. */
interface OverheadRow {
  integration: string;
  messages: number;
  aloneMs: number;
  withMs: number;
  /** Agents SDK: the compaction filter's own time per call, timed from inside (median). */
  filterMs?: number;
}

/** Times of the compaction filter's calls (the Agents SDK's warm-up calls excluded). */
const filterTimes: number[] = [];

/** Runs the variants interleaved (rotating the order each round); returns each one's median. */
async function measure(
  server: ProviderTestServer,
  variants: Variant[],
  warmup: number,
  rounds: number,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) {
    for (const variant of variants) {
      await variant.call();
      server.requests.length = 0;
    }
  }
  filterTimes.length = 0;
  const times = variants.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < variants.length; k++) {
      const index = (round + k) % variants.length;
      gc({ type: 'major' });
      const start = performance.now();
      await variants[index]!.call();
      times[index]!.push(performance.now() - start);
      // The server records every request; the bench keeps none.
      server.requests.length = 0;
    }
  }
  return times.map(median);
}

function newManager(model = 'gpt-4o'): CompactManager {
  return new CompactManager({ model, maxContextTokens: NO_TRIGGER_WINDOW });
}

// AI SDK: generateText over the chat model, with and without the middleware.
function aiSdkVariants(server: ProviderTestServer, system: string, chat: ChatMessage[]): Variant[] {
  const provider = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
  const tools = Object.fromEntries(
    TOOL_NAMES.map((name) => [
      name,
      aiTool({
        description: TOOL_DESCRIPTION,
        inputSchema: z.object({ path: z.string(), pattern: z.string() }),
      }),
    ]),
  ) as ToolSet;
  const loop = (label: string, model: Parameters<typeof generateText>[0]['model']): Variant => {
    const messages = chatToAiSdk(chat, 'model-messages') as ModelMessage[];
    return {
      label,
      async call() {
        messages.push({ role: 'user', content: nextUserText() });
        const result = await generateText({ model, system, messages, tools, maxRetries: 0 });
        messages.push(...result.response.messages);
      },
    };
  };
  return [
    loop('alone', provider.chat('gpt-4o')),
    loop(
      'with',
      wrapLanguageModel({
        model: provider.chat('gpt-4o'),
        middleware: aiSdkMiddleware(newManager(), { sessionId: 'ai-sdk' }),
      }),
    ),
  ];
}

/** Chat messages as Agents SDK items (Responses shapes). */
export function chatToAgentItems(chat: ChatMessage[]): AgentInputItem[] {
  const names = new Map<string, string>();
  const items: AgentInputItem[] = [];
  for (const message of chat) {
    if (message.role === 'user') items.push({ role: 'user', content: message.content ?? '' });
    if (message.role === 'assistant') {
      if (message.content)
        items.push({
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: message.content }],
        });
      for (const call of message.tool_calls ?? []) {
        names.set(call.id, call.function.name);
        items.push({
          type: 'function_call',
          callId: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
          status: 'completed',
        });
      }
    }
    if (message.role === 'tool') {
      const callId = message.tool_call_id ?? '';
      items.push({
        type: 'function_call_result',
        callId,
        name: names.get(callId) ?? 'read_file',
        status: 'completed',
        output: message.content ?? '',
      });
    }
  }
  return items;
}

// OpenAI Agents SDK: one run per call, its history handed back as the next run's input.
function agentsVariants(server: ProviderTestServer, system: string, chat: ChatMessage[]): Variant[] {
  setTracingDisabled(true);
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: server.openaiBaseURL }),
    tracingDisabled: true,
  });
  const agent = new Agent({
    name: 'coder',
    instructions: system,
    model: 'gpt-4o',
    tools: TOOL_NAMES.map((name) =>
      agentTool({
        name,
        description: TOOL_DESCRIPTION,
        parameters: z.object({ path: z.string(), pattern: z.string() }),
        execute: async () => 'ok',
      }),
    ),
  });
  const compaction = compactionInputFilter(newManager(), { sessionId: 'agents' });
  const timedCompaction: CallModelInputFilter = async (args) => {
    const start = performance.now();
    const result = await compaction(args);
    filterTimes.push(performance.now() - start);
    return result;
  };
  // Kept items pass by identity (what the SDK then persists): the wrapper must say so too.
  Object.assign(timedCompaction, { preserveInputIdentity: compaction.preserveInputIdentity });
  const loop = (label: string, filter?: CallModelInputFilter): Variant => {
    let history = chatToAgentItems(chat);
    return {
      label,
      async call() {
        const input = [...history, { role: 'user' as const, content: nextUserText() }];
        const result = await runner.run(agent, input, filter ? { callModelInputFilter: filter } : {});
        history = result.history;
      },
    };
  };
  // The alternative to a filter: a session read back (and compacted) at the start of each run.
  const sessionLoop = (label: string, compacting: boolean): Variant => {
    const memory = new MemorySession({ sessionId: `agents-${label}`, initialItems: chatToAgentItems(chat) });
    const session = compacting
      ? new CompactionSession({ session: memory, manager: newManager(), instructions: system })
      : memory;
    return {
      label,
      async call() {
        await runner.run(agent, nextUserText(), { session });
      },
    };
  };
  return [
    loop('alone'),
    loop('do-nothing filter', ({ modelData }) => modelData),
    loop('with', timedCompaction),
    sessionLoop('MemorySession', false),
    sessionLoop('CompactionSession', true),
  ];
}

/** Chat messages as Anthropic message params (tool results of one call batch in one user message). */
export function chatToAnthropic(chat: ChatMessage[]): Anthropic.MessageParam[] {
  const out: Anthropic.MessageParam[] = [];
  for (const message of chat) {
    if (message.role === 'user') out.push({ role: 'user', content: message.content ?? '' });
    if (message.role === 'assistant') {
      const content: Anthropic.ContentBlockParam[] = [];
      if (message.content) content.push({ type: 'text', text: message.content });
      for (const call of message.tool_calls ?? [])
        content.push({
          type: 'tool_use',
          id: call.id,
          name: call.function.name,
          input: JSON.parse(call.function.arguments),
        });
      out.push({ role: 'assistant', content });
    }
    if (message.role === 'tool') {
      const block: Anthropic.ToolResultBlockParam = {
        type: 'tool_result',
        tool_use_id: message.tool_call_id ?? '',
        content: message.content ?? '',
      };
      const last = out.at(-1);
      if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(block);
      else out.push({ role: 'user', content: [block] });
    }
  }
  return out;
}

// Anthropic SDK: messages.create, the client alone and wrapped by withCompaction.
function anthropicVariants(server: ProviderTestServer, system: string, chat: ChatMessage[]): Variant[] {
  const tools: Anthropic.Tool[] = TOOL_NAMES.map((name) => ({
    name,
    description: TOOL_DESCRIPTION,
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string' }, pattern: { type: 'string' } },
    },
  }));
  const loop = (label: string, client: Pick<Anthropic, 'messages'>): Variant => {
    const messages = chatToAnthropic(chat);
    return {
      label,
      async call() {
        messages.push({ role: 'user', content: nextUserText() });
        const reply = await client.messages.create({
          model: 'claude-sonnet-4-6',
          max_tokens: 512,
          system,
          messages,
          tools,
        });
        messages.push({ role: 'assistant', content: reply.content });
      },
    };
  };
  const client = () => new Anthropic({ apiKey: 'test-key', baseURL: server.anthropicBaseURL, maxRetries: 0 });
  return [
    loop('alone', client()),
    loop('with', withCompaction(client(), newManager('claude-sonnet-4-6'), { sessionId: 'anthropic' })),
  ];
}

// LangChain.js: createAgent over ChatOpenAI, the state's messages handed back each call.
function langChainVariants(server: ProviderTestServer, system: string, chat: ChatMessage[]): Variant[] {
  const model = new ChatOpenAI({
    model: 'gpt-4o',
    apiKey: 'test-key',
    maxRetries: 0,
    configuration: { baseURL: server.openaiBaseURL },
  });
  const tools = TOOL_NAMES.map((name) =>
    langChainTool(async () => 'ok', {
      name,
      description: TOOL_DESCRIPTION,
      schema: z.object({ path: z.string(), pattern: z.string() }),
    }),
  );
  const loop = (label: string, withMiddleware: boolean): Variant => {
    const agent = createAgent({
      model,
      tools,
      systemPrompt: system,
      middleware: withMiddleware ? [langChainMiddleware(newManager(), { sessionId: 'langchain' })] : [],
    });
    let messages: langChainClasses.BaseMessage[] = chatToLangChain(chat, langChainClasses);
    return {
      label,
      async call() {
        const result = await agent.invoke({
          messages: [...messages, new langChainClasses.HumanMessage(nextUserText())],
        });
        messages = result.messages;
      },
    };
  };
  return [loop('alone', false), loop('with', true)];
}

const INTEGRATIONS: {
  name: string;
  variants: (server: ProviderTestServer, system: string, chat: ChatMessage[]) => Variant[];
}[] = [
  { name: 'AI SDK (generateText, middleware)', variants: aiSdkVariants },
  { name: 'Agents SDK (callModelInputFilter)', variants: agentsVariants },
  { name: 'Anthropic SDK (withCompaction)', variants: anthropicVariants },
  { name: 'LangChain.js (createAgent middleware)', variants: langChainVariants },
];

/** Warm-up calls and timed calls per variant at each size. */
const PLAN: { messages: number; warmup: number; rounds: number }[] = [
  { messages: 250, warmup: 5, rounds: 25 },
  { messages: 1_000, warmup: 4, rounds: 15 },
  { messages: 4_000, warmup: 2, rounds: 9 },
];

/** Every integration at every size; returns the rows (Agents extras under their own names). */
export async function sdkOverheadBench(options: { quick?: boolean } = {}): Promise<OverheadRow[]> {
  const plan = options.quick ? PLAN.filter((size) => size.messages <= 1_000) : PLAN;
  const server = await startProviderTestServer();
  const rows: OverheadRow[] = [];
  // A CompactionSession without a filter warns once (it compacts between runs only): measured
  // here on purpose, so the warning is kept out of the table.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).includes('CompactionSession without its input filter')) warn(...args);
  };
  try {
    for (const integration of INTEGRATIONS) {
      for (const { messages, warmup, rounds } of plan) {
        const { system, messages: chat } = chatHistory(messages);
        const variants = integration.variants(server, system, chat);
        const medians = await measure(server, variants, warmup, rounds);
        const at = (label: string) => medians[variants.findIndex((variant) => variant.label === label)]!;
        const add = (name: string, alone: string, withLabel: string) =>
          rows.push({ integration: name, messages: chat.length, aloneMs: at(alone), withMs: at(withLabel) });
        add(integration.name, 'alone', 'with');
        if (variants.some((variant) => variant.label === 'do-nothing filter')) {
          rows.at(-1)!.filterMs = median(filterTimes);
          add('  Agents SDK, do-nothing filter', 'alone', 'do-nothing filter');
          add('  Agents SDK, MemorySession -> CompactionSession', 'MemorySession', 'CompactionSession');
        }
      }
    }
  } finally {
    console.warn = warn;
    await server.close();
  }
  return rows;
}

/** Prints the table and the Agents SDK's own share. */
export function printSdkOverhead(rows: OverheadRow[]): void {
  console.log(
    'Warm per-call wall time through each SDK against a loopback server, no trigger (median, same run):',
  );
  console.log(
    `  ${'integration'.padEnd(50)} ${'messages'.padStart(8)} ${'SDK alone'.padStart(11)} ${'with'.padStart(11)} ${'added'.padStart(10)} ${'ratio'.padStart(6)}`,
  );
  for (const row of rows) {
    console.log(
      `  ${row.integration.padEnd(50)} ${row.messages.toLocaleString('en').padStart(8)} ${ms(row.aloneMs).padStart(11)} ${ms(row.withMs).padStart(11)} ${ms(row.withMs - row.aloneMs).padStart(10)} ${`${(row.withMs / row.aloneMs).toFixed(2)}x`.padStart(6)}`,
    );
  }
  const noop = rows.filter((row) => row.integration.includes('do-nothing'));
  for (const row of rows) {
    const filterOnly = noop.find((other) => other.messages === row.messages);
    if (row.filterMs === undefined || !filterOnly) continue;
    console.log(
      `  Agents SDK at ${row.messages.toLocaleString('en')} messages: any callModelInputFilter, even a do-nothing one, costs the SDK itself ${ms(filterOnly.withMs - filterOnly.aloneMs)} per call (it clones and matches every item again); the compaction filter's own time is ${ms(row.filterMs)} (median, timed inside).`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printSdkOverhead(await sdkOverheadBench({ quick: process.argv.includes('--quick') }));
}
