/**
 * Level d (cut an oversized message) over a round of parallel tool calls: the calls'
 * arguments together are too large for the window, each one alone is not. The cut measured
 * the message against its longest string only, found none longer than what the message may
 * keep, and gave up: the same bytes in one call were cut, in three parallel calls the request
 * failed with insufficient_budget (Chat), or the newest message (the results the model has yet
 * to read) was cut instead (Anthropic). Both through the real SDKs over a loopback server.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import { withCompaction } from '../../src/adapters/anthropic/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import {
  checkSoundRequest,
  type ProviderTestServer,
  startProviderTestServer,
} from '../../src/testing/index.js';

const WINDOW = 8_000;
/** Distinct words (a run of one letter would compress to few tokens). */
const words = (seed: number, count: number) =>
  Array.from({ length: count }, (_, i) => `w${(seed * 7919 + i * 104729) % 100_000}`).join(' ');

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a round of parallel calls too large for the window together', () => {
  it('Chat (openai SDK): the calls are cut, the results sent as given, the request fits', async () => {
    const history: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Write the three config files, then read back each one.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [0, 1, 2].map((i) => ({
          id: `call_${i}`,
          type: 'function' as const,
          function: {
            name: 'write_file',
            arguments: JSON.stringify({ path: `f${i}.txt`, text: words(i, 1100) }),
          },
        })),
      },
      ...[0, 1, 2].map((i) => ({
        role: 'tool' as const,
        tool_call_id: `call_${i}`,
        content: `wrote f${i}.txt: ${words(i + 10, 250)}`,
      })),
    ];
    server = await startProviderTestServer();
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    expect(manager.estimate(history).total).toBeGreaterThan(WINDOW);
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test', maxRetries: 0 });
    const messages = await manager.preflight('files', history);
    await client.chat.completions.create({ model: 'gpt-4o', messages });
    const violations = checkSoundRequest({
      request: server.requests[0]!.body,
      given: history,
      maxContextTokens: WINDOW,
    });
    expect(violations).toEqual([]);
    await manager.shutdown();
  });

  it('Anthropic (withCompaction): the tool_use inputs are cut, not the newest tool results', async () => {
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Write the three config files, then read back each one.' },
      {
        role: 'assistant',
        content: [0, 1, 2].map((i) => ({
          type: 'tool_use' as const,
          id: `toolu_${i}`,
          name: 'write_file',
          input: { path: `f${i}.txt`, text: words(i, 900) },
        })),
      },
      {
        role: 'user',
        content: [0, 1, 2].map((i) => ({
          type: 'tool_result' as const,
          tool_use_id: `toolu_${i}`,
          content: `wrote f${i}.txt: ${words(i + 10, 200)}`,
        })),
      },
    ];
    server = await startProviderTestServer();
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: WINDOW });
    expect(manager.estimate(history).total).toBeGreaterThan(WINDOW);
    const anthropic = withCompaction(
      new Anthropic({ baseURL: server.anthropicBaseURL, apiKey: 'test', maxRetries: 0 }),
      manager,
      { sessionId: 'files' },
    );
    await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 256, messages: history });
    const violations = checkSoundRequest({
      request: server.requests[0]!.body,
      given: history,
      maxContextTokens: WINDOW,
      model: 'claude-sonnet-4-6',
    });
    expect(violations).toEqual([]);
    await manager.shutdown();
  });

  it('Anthropic: the newest user turn of three parallel results, too large together, is cut (it failed)', async () => {
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Read the three files.' },
      {
        role: 'assistant',
        content: [0, 1, 2].map((i) => ({
          type: 'tool_use' as const,
          id: `toolu_${i}`,
          name: 'read_file',
          input: { path: `f${i}.txt` },
        })),
      },
      {
        role: 'user',
        content: [0, 1, 2].map((i) => ({
          type: 'tool_result' as const,
          tool_use_id: `toolu_${i}`,
          content: words(i, 1200),
        })),
      },
    ];
    server = await startProviderTestServer();
    const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: WINDOW });
    const anthropic = withCompaction(
      new Anthropic({ baseURL: server.anthropicBaseURL, apiKey: 'test', maxRetries: 0 }),
      manager,
      { sessionId: 'reads' },
    );
    await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 256, messages: history });
    const body = server.requests[0]!.body as { messages: Anthropic.MessageParam[] };
    expect(manager.estimate(body.messages).total).toBeLessThanOrEqual(WINDOW);
    // Each cut frees more than its marker costs: no result is cut by a few characters.
    const removed = [...JSON.stringify(body).matchAll(/([\d,]+) chars cut here/g)].map((m) =>
      Number(m[1]!.replaceAll(',', '')),
    );
    expect(removed.length).toBeGreaterThan(0);
    expect(removed.filter((chars) => chars < 100)).toEqual([]);
    const violations = checkSoundRequest({
      request: body,
      given: history,
      maxContextTokens: WINDOW,
      budgetTokens: WINDOW - 800,
      model: 'claude-sonnet-4-6',
    });
    expect(violations).toEqual([]);
    await manager.shutdown();
  });
});
