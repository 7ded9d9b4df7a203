/**
 * The proxy in front of Anthropic run with an OpenAI model (the CLI's default `gpt-4o`, as in
 * the documented `agent-compaction proxy --upstream https://api.anthropic.com --max-context N`):
 * its exact o200k counts are about a quarter short of what Claude counts. The usage the
 * provider reports calibrates them, as it does any estimate, so the requests stay inside the
 * window. Before, an exact counter was never calibrated: the trigger (0.85 of the window in
 * o200k tokens) was past the window in Claude's, and the provider refused the request.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { ProviderHandler } from '../../src/testing/provider-test-server.js';
import {
  answerToolUses,
  type ProxiedProvider,
  startProxiedProvider,
  windowedProvider,
} from './proxy-fixture.js';

const WINDOW = 8000;
const STEPS = 40;
/** Claude's count of a request, as the library itself estimates it: o200k_base x1.25. */
const CLAUDE_RATIO = 1.25;

let running: ProxiedProvider | undefined;
let counter: CompactManager | undefined;
afterEach(async () => {
  await running?.close();
  await counter?.shutdown();
  running = counter = undefined;
});

/** A provider that counts like Claude, reports that usage, and refuses a request over the window. */
function claudeProvider(count: CompactManager, reported: number[]): ProviderHandler {
  return windowedProvider({
    window: WINDOW,
    steps: STEPS,
    recorded: reported,
    reportUsage: true,
    measure: (body) => {
      const { messages, system, tools } = body as { messages: unknown[]; system?: string; tools?: unknown[] };
      const options = { format: 'anthropic' as const, ...(system ? { system } : {}), tools: tools ?? [] };
      return Math.ceil(CLAUDE_RATIO * count.estimate(messages, options).total);
    },
    refusal: (tokens) => `prompt is too long: ${tokens} tokens > ${WINDOW} maximum`,
  });
}

describe('Anthropic requests through a proxy counting with an OpenAI model', () => {
  it('are calibrated by the reported usage: every request inside the window', async () => {
    counter = new CompactManager({ model: 'gpt-4o', maxContextTokens: 200_000, redaction: false });
    const reported: number[] = [];
    running = await startProxiedProvider(claudeProvider(counter, reported), {
      // The trigger alone decides (no earlier compaction for the prompt cache's sake).
      manager: { model: 'gpt-4o', maxContextTokens: WINDOW, policy: { costTrigger: false } },
    });
    const client = new Anthropic({ apiKey: 'sk-test', baseURL: running.proxy.url, maxRetries: 0 });
    const tools: Anthropic.Tool[] = [{ name: 'probe', input_schema: { type: 'object', properties: {} } }];
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Probe every host.' }];
    for (let step = 0; step <= STEPS; step++) {
      const params = {
        model: 'claude-sonnet-4-5',
        max_tokens: 500,
        system: 'You are an SRE.',
        messages,
        tools,
      };
      const message = await client.messages.create(params);
      if (!answerToolUses(messages, message, `output ${step}: ${'cpu=93% mem=71% disk=40% '.repeat(25)}`))
        break;
    }
    expect(reported).toHaveLength(STEPS + 1);
    expect(reported.filter((tokens) => tokens > WINDOW)).toEqual([]);
    expect(running.logs.some((entry) => entry.applied === true)).toBe(true);
  });
});
