/**
 * Private helpers of the proxy tests: a provider test server (scripted tool loop) with the
 * proxy in front of it, both on loopback, and a manager whose events are kept.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { CompactManagerOptions } from '../../src/core/manager/manager-options.js';
import type { ProxyLogEntry } from '../../src/proxy/index.js';
import { type RunningProxy, startProxy } from '../../src/proxy/index.js';
import {
  type ProviderHandler,
  type ProviderTestServer,
  startProviderTestServer,
} from '../../src/testing/provider-test-server.js';
import { WINDOW } from '../support/tool-loop.js';

/** A provider, the proxy in front of it, and what the proxy's manager emitted and logged. */
export interface ProxiedProvider {
  provider: ProviderTestServer;
  proxy: RunningProxy;
  manager: CompactManager;
  events: AnyCompactEvent[];
  logs: ProxyLogEntry[];
  close(): Promise<void>;
}

/** Starts a provider test server with `handler` and the proxy in front of it. */
export async function startProxiedProvider(
  handler: ProviderHandler,
  options: { manager?: CompactManagerOptions; maxBodyBytes?: number; provider?: ProviderTestServer } = {},
): Promise<ProxiedProvider> {
  const provider = options.provider ?? (await startProviderTestServer({ handler }));
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW, ...options.manager });
  const events: AnyCompactEvent[] = [];
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  const logs: ProxyLogEntry[] = [];
  const proxy = await startProxy({
    upstream: provider.url,
    manager,
    port: 0,
    log: (entry) => logs.push(entry),
    ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
  });
  return {
    provider,
    proxy,
    manager,
    events,
    logs,
    close: async () => {
      await proxy.close({ graceMs: 1000 });
      await provider.close();
    },
  };
}

/**
 * A provider that measures each request (`measure`, the tokens it would bill), records the
 * figure, refuses a request over `window` with `refusal`, and asks for the `probe` tool `steps`
 * times before it answers "Done." (with `usage` when `reportUsage`).
 */
export function windowedProvider(options: {
  window: number;
  steps: number;
  measure: (body: Record<string, unknown>) => number;
  refusal: (tokens: number) => string;
  recorded: number[];
  reportUsage?: boolean;
}): ProviderHandler {
  let calls = 0;
  return (request) => {
    const tokens = options.measure(request.body as Record<string, unknown>);
    options.recorded.push(tokens);
    if (tokens > options.window) return { error: { status: 400, message: options.refusal(tokens) } };
    const usage = options.reportUsage ? { usage: { inputTokens: tokens, outputTokens: 5 } } : {};
    calls++;
    return calls > options.steps
      ? { text: 'Done.', ...usage }
      : { toolCalls: [{ name: 'probe', arguments: { host: `h${calls}` } }], ...usage };
  };
}

/**
 * Answers an Anthropic message's `tool_use` blocks: the assistant turn and one user turn of
 * `tool_result`s (`output` each) are pushed to `messages`. False when it asked for no tool.
 */
export function answerToolUses(
  messages: Anthropic.MessageParam[],
  message: Anthropic.Message,
  output: string,
): boolean {
  const calls = message.content.filter((block) => block.type === 'tool_use');
  if (calls.length === 0) return false;
  messages.push({ role: 'assistant', content: message.content });
  messages.push({
    role: 'user',
    content: calls.map((call) => ({ type: 'tool_result' as const, tool_use_id: call.id, content: output })),
  });
  return true;
}
