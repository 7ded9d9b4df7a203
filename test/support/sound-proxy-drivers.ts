/**
 * The proxy as a loop path of the property test (issue 43 point 3): a stateless client resends
 * its whole history every step through `startProxy` (the manager is the test's, so its events
 * are counted), the proxy compacts and forwards to the loopback server, which records what the
 * provider receives. Chat Completions (OpenAI client) and Messages (Anthropic client): the
 * proxy's two wire formats of a summary. Each call names its session in the session header.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { SESSION_HEADER, startProxy } from '../../src/proxy/index.js';
import { type LoopCase, REPLY, runLoop, systemOf } from './sound-loop-drivers.js';
import { anthropicForm, chatForm, type Ledger, TOOL, userText } from './sound-paths.js';

const CLAUDE = 'claude-sonnet-4-6';

/** The proxy loop paths, by name. */
export const PROXY_LOOP_PATHS: Record<string, (ledger: Ledger, loop: LoopCase) => Promise<void>> = {
  'proxy: chat': (ledger, loop) => proxyLoop('proxy: chat', ledger, loop, 'chat'),
  'proxy: anthropic': (ledger, loop) => proxyLoop('proxy: anthropic', ledger, loop, 'anthropic'),
};

function proxyLoop(path: string, ledger: Ledger, loop: LoopCase, wire: 'chat' | 'anthropic'): Promise<void> {
  const model = wire === 'chat' ? 'gpt-4o' : CLAUDE;
  return runLoop(path, ledger, loop, model, async ({ url, manager, script, session }) => {
    const proxy = await startProxy({ upstream: url, manager, port: 0, log: () => {} });
    const headers = { [SESSION_HEADER]: session };
    const send =
      wire === 'chat' ? chatSender(proxy.url, loop, headers) : anthropicSender(proxy.url, loop, headers);
    try {
      script.startRun(userText(path, loop.promptTokens), loop.steps);
      for (let step = 0; step <= loop.steps; step++) {
        if (!(await send(script.turns))) break;
      }
    } finally {
      await proxy.close({ graceMs: 1000 });
    }
  });
}

type Sender = (turns: Parameters<typeof chatForm>[0]) => Promise<boolean>;

function chatSender(proxyUrl: string, loop: LoopCase, headers: Record<string, string>): Sender {
  const client = new OpenAI({ apiKey: 'test-key', baseURL: `${proxyUrl}/v1`, maxRetries: 0 });
  const tools: OpenAI.ChatCompletionTool[] = [
    { type: 'function', function: { name: TOOL, parameters: { type: 'object', properties: {} } } },
  ];
  return async (turns) => {
    const messages = [{ role: 'system', content: systemOf(loop) }, ...chatForm(turns)];
    const reply = await client.chat.completions.create(
      {
        model: 'gpt-4o',
        messages: messages as never,
        tools,
        max_completion_tokens: loop.replyTokens ?? REPLY,
      },
      { headers },
    );
    return (reply.choices[0]?.message.tool_calls?.length ?? 0) > 0;
  };
}

function anthropicSender(proxyUrl: string, loop: LoopCase, headers: Record<string, string>): Sender {
  const client = new Anthropic({ apiKey: 'test-key', baseURL: proxyUrl, maxRetries: 0 });
  const tools: Anthropic.Tool[] = [
    { name: TOOL, description: 'Probe the next host', input_schema: { type: 'object', properties: {} } },
  ];
  return async (turns) => {
    const reply = await client.messages.create(
      {
        model: CLAUDE,
        max_tokens: loop.replyTokens ?? REPLY,
        system: systemOf(loop),
        messages: anthropicForm(turns) as Anthropic.MessageParam[],
        tools,
      },
      { headers },
    );
    return reply.content.some((block) => block.type === 'tool_use');
  };
}
