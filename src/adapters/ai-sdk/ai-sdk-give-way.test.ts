/**
 * Issue 43, first defect: in a long `read_file` loop the protected tool results give way by
 * shortening (a result cut head and tail, cascade/give-way.ts). Such a result must go back to the
 * AI SDK as a tool result paired with its call, never as an assistant text: chat and Responses,
 * generateText, streamText and prepareStep.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type LanguageModel, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { requestViolations, reusedIdLoop } from '../../../test/support/tool-loop.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { compactionMiddleware, compactionPrepareStep } from './index.js';

const STEPS = 38;
const SYSTEM = 'You read source files for the user.';

/** A source file of 1,000 to 2,000 tokens, distinct per step. */
function sourceFile(step: number): string {
  const lines = 60 + ((step * 37) % 60);
  return Array.from(
    { length: lines },
    (_, line) => `export const value_${step}_${line} = compute(${line * 7}, "src/mod${step}.ts"); // checked`,
  ).join('\n');
}

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function setup() {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8000 });
  const events: AnyCompactEvent[] = [];
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  let step = 0;
  const tools = {
    read_file: tool({
      description: 'Read a source file',
      inputSchema: z.object({ step: z.number() }),
      execute: async () => sourceFile(step++),
    }),
  };
  return { manager, events, tools };
}

async function provider() {
  server = await startProviderTestServer({
    handler: reusedIdLoop({
      tool: 'read_file',
      steps: STEPS,
      idFor: (step) => `call_${String(step).padStart(4, '0')}`,
    }),
  });
  return createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
}

/** The loop ran to its end, every request sound, and a result gave way by a cut. */
function expectSound(manager: CompactManager, events: AnyCompactEvent[]) {
  expect(server!.requests).toHaveLength(STEPS + 1);
  expect(requestViolations(server!, manager)).toEqual([]);
  const cut = events.filter(
    (event) =>
      event.name === 'compact.reduction' &&
      event.properties.level === 'cut_oversized' &&
      event.properties.refs.some((ref) => ref.startsWith('cut-')),
  );
  expect(cut.length).toBeGreaterThan(0);
}

const api = ['chat', 'responses'] as const;
const modelOf = (openai: ReturnType<typeof createOpenAI>, kind: (typeof api)[number]): LanguageModel =>
  kind === 'chat' ? openai.chat('gpt-4o') : openai.responses('gpt-4o');

describe(`AI SDK: a ${STEPS}-step read_file loop where results give way by shortening`, () => {
  for (const kind of api) {
    it(`generateText through the middleware (${kind})`, async () => {
      const { manager, events, tools } = setup();
      const model = wrapLanguageModel({
        model: modelOf(await provider(), kind) as never,
        middleware: compactionMiddleware(manager, { sessionId: `gen-${kind}` }),
      });
      await generateText({
        model,
        system: SYSTEM,
        tools,
        prompt: 'Read every module.',
        stopWhen: stepCountIs(STEPS + 5),
      });
      expectSound(manager, events);
    });

    it(`streamText through the middleware (${kind})`, async () => {
      const { manager, events, tools } = setup();
      const model = wrapLanguageModel({
        model: modelOf(await provider(), kind) as never,
        middleware: compactionMiddleware(manager, { sessionId: `stream-${kind}` }),
      });
      const result = streamText({
        model,
        system: SYSTEM,
        tools,
        prompt: 'Read every module.',
        stopWhen: stepCountIs(STEPS + 5),
      });
      expect(await result.text).toContain('Done after');
      expectSound(manager, events);
    });

    it(`generateText with compactionPrepareStep (${kind})`, async () => {
      const { manager, events, tools } = setup();
      const prepareStep = compactionPrepareStep(manager, { sessionId: `prep-${kind}`, system: SYSTEM });
      await generateText({
        model: modelOf(await provider(), kind),
        system: SYSTEM,
        tools,
        prompt: 'Read every module.',
        stopWhen: stepCountIs(STEPS + 5),
        prepareStep,
      });
      expectSound(manager, events);
    });
  }
});
