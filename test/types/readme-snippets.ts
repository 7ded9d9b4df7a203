/**
 * Type tests: every TypeScript snippet of the README and of the adapters' TSDoc examples,
 * compiled by `tsc -p tsconfig.json --noEmit` (this folder is in `include`), plus the helpers
 * users store in variables before passing them on. Never run; a type error fails the typecheck.
 */
import { openai } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import type { AgentInputItem } from '@openai/agents';
import { Agent, MemorySession, OpenAIProvider, Runner, run } from '@openai/agents';
import {
  generateObject,
  generateText,
  type ModelMessage,
  stepCountIs,
  streamText,
  ToolLoopAgent,
  tool,
  wrapLanguageModel,
} from 'ai';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { expectTypeOf } from 'vitest';
import { z } from 'zod';
import { compactionMiddleware, compactionPrepareStep } from '../../src/adapters/ai-sdk/index.js';
import {
  type AnthropicMessage,
  compactThreadHistory,
  withCompaction,
} from '../../src/adapters/anthropic/index.js';
import {
  type AgentItem,
  CompactionModelProvider,
  CompactionSession,
  compactionInputFilter,
} from '../../src/adapters/openai-agents/index.js';
import { loadConfig, toManagerOptions } from '../../src/config/index.js';
import { ariadneExporter, consoleExporter } from '../../src/exporters/index.js';
import { type CompactionResult, CompactManager, type WithMeta } from '../../src/index.js';
import { fsStorage } from '../../src/storage/fs/index.js';
import { resilientSummarizer } from '../../src/summarizers/index.js';
import { openaiSummarizer } from '../../src/summarizers/openai/index.js';

declare const sessionId: string;
declare const threadId: string;
declare const POLICY: string;
declare const system: string;

export async function quickStart(
  history: WithMeta<ChatCompletionMessageParam>[],
  tools: OpenAI.ChatCompletionTool[],
) {
  const client = new OpenAI();
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
  const messages = await manager.preflight(sessionId, history, { tools });
  const reply = await client.chat.completions.create({ model: 'gpt-4o', messages, tools });
  expectTypeOf(reply.choices).toBeArray();
  // The README's protect snippet (TS2353 before `WithMeta`).
  history.push({ role: 'developer', content: POLICY, meta: { protected: true, label: 'Security Policy' } });
  expectTypeOf(messages).toEqualTypeOf<WithMeta<ChatCompletionMessageParam>[]>();
}

export async function agentsSdk(tools: Agent['tools']) {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
  const agent = new Agent({ name: 'Assistant', instructions: 'Be helpful.', tools });
  const session = new CompactionSession({ session: new MemorySession(), manager });
  const result = await run(agent, 'Hello', session.runOptions());
  expectTypeOf(result.finalOutput).not.toBeNever();
  // The filter stored in a variable, for run() and for a Runner.
  const callModelInputFilter = compactionInputFilter(manager, { sessionId: 'chat-42' });
  await run(agent, 'Hello', { callModelInputFilter });
  await new Runner().run(agent, 'Hello', { session, callModelInputFilter: session.inputFilter() });
  const recovering = new Runner({ modelProvider: new CompactionModelProvider(new OpenAIProvider()) });
  await recovering.run(agent, 'Hello', session.runOptions());
  const pinned: AgentItem = { role: 'system', content: POLICY, meta: { protected: true } };
  const items: AgentInputItem[] = [pinned];
  expectTypeOf(items).toBeArray();
}

export async function aiSdk(messages: ModelMessage[]) {
  const tools = {
    probe: tool({
      description: 'Probe',
      inputSchema: z.object({ host: z.string() }),
      execute: async () => 'ok',
    }),
  };
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
  const model = wrapLanguageModel({
    model: openai('gpt-4o'),
    middleware: compactionMiddleware(manager, { sessionId: 'chat-42' }),
  });
  const { text } = await generateText({ model, system, tools, messages, stopWhen: stepCountIs(20) });
  expectTypeOf(text).toBeString();
  streamText({ model, system, tools, messages });
  await generateObject({ model, schema: z.object({ ok: z.boolean() }), messages });
  // prepareStep stored in a variable (TS2322 before), used with a specific tool set and an agent.
  const prepareStep = compactionPrepareStep(manager, { sessionId: 'chat-43', system });
  await generateText({
    model: openai('gpt-4o'),
    system,
    tools,
    messages,
    stopWhen: stepCountIs(20),
    prepareStep,
  });
  streamText({ model: openai('gpt-4o'), system, tools, messages, prepareStep });
  const agent = new ToolLoopAgent({ model: openai('gpt-4o'), instructions: system, tools, prepareStep });
  await agent.generate({ prompt: 'Hello' });
  // A protected AI SDK message.
  messages.push({ role: 'user', content: POLICY, providerOptions: { agentCompaction: { protected: true } } });
}

export async function anthropicSdk(
  messages: AnthropicMessage[],
  tools: Anthropic.Tool[],
  model: string,
  threadHistory: Anthropic.MessageParam[],
  userMessage: string,
) {
  const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: 200_000 });
  const anthropic = withCompaction(new Anthropic(), manager, { sessionId: threadId });
  const reply = await anthropic.messages.create({ model, system, max_tokens: 4096, messages, tools });
  expectTypeOf(reply).toExtend<Anthropic.Message>();
  const final = await anthropic.messages.stream({ model, system, max_tokens: 4096, messages }).finalMessage();
  expectTypeOf(final).toExtend<Anthropic.Message>();
  // The SDK's APIPromise survives the wrapper.
  const { data, response } = await anthropic.messages
    .create({ model, max_tokens: 1, messages })
    .withResponse();
  expectTypeOf(data).toEqualTypeOf<Anthropic.Message>();
  expectTypeOf(response).toEqualTypeOf<Response>();
  const raw = await anthropic.messages.create({ model, max_tokens: 1, messages }).asResponse();
  expectTypeOf(raw).toEqualTypeOf<Response>();
  const stream = await anthropic.messages.create({ model, max_tokens: 1, messages, stream: true });
  for await (const event of stream) expectTypeOf(event.type).toBeString();
  await anthropic.beta.messages.create({ model, max_tokens: 1, messages });
  // compactThreadHistory with plain MessageParam[] and its result sent as is (TS2769 before).
  const result = await compactThreadHistory({
    manager,
    sessionId: threadId,
    systemPrompt: system,
    threadHistory,
    userMessage,
  });
  expectTypeOf(result).toExtend<CompactionResult<unknown>>();
  await anthropic.messages.create({ model, system, max_tokens: 4096, messages: result.messages });
  messages.push({ role: 'user', content: POLICY, meta: { protected: true, label: 'policy' } });
}

export async function api(
  messages: ChatCompletionMessageParam[],
  tools: OpenAI.ChatCompletionTool[],
  signal: AbortSignal,
) {
  const manager = new CompactManager({ model: 'gpt-4o' });
  await manager.preflight(sessionId, messages, {
    tools,
    system,
    traceId: 't',
    parentSpanId: 'p',
    agent: 'planner',
    signal,
  });
  const result = await manager.compact(sessionId, messages, {});
  expectTypeOf(result.messages).toEqualTypeOf<ChatCompletionMessageParam[]>();
  await manager.manualCompact(sessionId, messages, { note: 'by hand' });
  expectTypeOf(manager.estimate(messages, { tools, system }).total).toBeNumber();
  const off = manager.on('compact.summary_created', (event) =>
    expectTypeOf(event.properties.version).toBeNumber(),
  );
  off();
  manager.recordUsage(sessionId, { inputTokens: 1200, cacheReadInputTokens: 300 });
  await manager.flush();
  await manager.shutdown();
}

export async function summariesTracingConfig() {
  const summarizer = resilientSummarizer(
    openaiSummarizer({ model: 'gpt-4o-mini', seed: 42, temperature: 0 }),
  );
  new CompactManager({ model: 'gpt-4o', summarizer });
  new CompactManager({
    model: 'gpt-4o',
    exporters: [consoleExporter(), ariadneExporter({ url: 'http://localhost:5175/ingest' })],
    storage: fsStorage({ path: '.compact/archive' }),
  });
  new CompactManager(await toManagerOptions(await loadConfig({ file: 'compact.yaml' })));
  // docs/configuration.md: the SDK objects toManagerOptions takes, typed by their shape (the
  // config entry names no optional peer): the SDKs' own objects fit.
  const config = await loadConfig({ file: 'compact.yaml' });
  await toManagerOptions(config, { openaiClient: new OpenAI(), anthropicClient: new Anthropic() });
  await toManagerOptions(config, { aiSdkModel: openai('gpt-4o-mini') });
  await toManagerOptions(config, { aiSdkModel: 'openai/gpt-4o-mini' });
  // @ts-expect-error an object that is no client is refused
  await toManagerOptions(config, { openaiClient: { chat: {} } });
}
