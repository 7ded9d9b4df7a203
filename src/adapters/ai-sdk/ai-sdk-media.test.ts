/**
 * Images and documents through the AI SDK integration: the conversion to the manager's messages
 * wrote a file or image part as its placeholder text (`[file application/pdf]`, 5 tokens), so a
 * conversation of PDFs (3,000 tokens a page) or screenshots was never compacted and its requests
 * passed the window: the third 2-page PDF made a request of 18,052 tokens for a 16,000 window.
 * Now each part is counted as the Chat part it stands for, while the caller's own part is sent.
 * Real AI SDK over the loopback server; every request judged by `checkSoundRequest`.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { pdfBytes, pngBytes } from '../../../test/support/test-images.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { isSummarizationRequest, readRequest, toolLoopHandler } from '../../testing/agent-model-script.js';
import { checkSoundRequest } from '../../testing/assert-sound-request.js';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { compactionMiddleware, compactionPrepareStep } from './index.js';

const WINDOW = 16_000;
const REPLY = 500;

let server: ProviderTestServer;

beforeEach(async () => {
  server = await startProviderTestServer({
    handler: toolLoopHandler({ tool: 'screenshot', callsPerTurn: 24, argumentsFor: (n) => ({ n }) }),
  });
});

afterEach(async () => {
  await server.close();
});

function modelFor(api: 'chat' | 'responses') {
  const provider = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key' });
  return api === 'chat' ? provider.chat('gpt-4o') : provider.responses('gpt-4o');
}

/** Every agent request (not the summarizer's) fits the window with its reply. */
function expectEveryRequestFits() {
  const agentRequests = server.requests.filter((request) => !isSummarizationRequest(readRequest(request)));
  expect(agentRequests.length).toBeGreaterThan(2);
  for (const request of agentRequests) {
    expect(checkSoundRequest({ request: request.body, maxContextTokens: WINDOW })).toEqual([]);
  }
}

const document = (k: number, form: 'base64' | 'bytes') => ({
  type: 'file' as const,
  data: form === 'base64' ? pdfBytes(2).toString('base64') : new Uint8Array(pdfBytes(2)),
  mediaType: 'application/pdf',
  filename: `report-${k}.pdf`,
});

describe('AI SDK images and documents are counted', () => {
  for (const api of ['chat', 'responses'] as const) {
    it(`middleware (${api}): a PDF per user turn keeps every request within the window`, async () => {
      const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
      const model = wrapLanguageModel({
        model: modelFor(api),
        middleware: compactionMiddleware(manager, { sessionId: `pdf-${api}` }),
      });
      const history: ModelMessage[] = [];
      for (let k = 0; k < 6; k++) {
        history.push({
          role: 'user',
          content: [
            { type: 'text', text: `Summarize report ${k}.` },
            document(k, k % 2 === 0 ? 'base64' : 'bytes'),
          ],
        });
        const { text } = await generateText({ model, messages: history, maxOutputTokens: REPLY });
        history.push({ role: 'assistant', content: text });
      }
      expectEveryRequestFits();
      await manager.shutdown();
    });

    it(`prepareStep (${api}): screenshots returned by a tool keep every request within the window`, async () => {
      const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
      const screenshot = tool({
        description: 'Take a screenshot',
        inputSchema: z.object({ n: z.number() }),
        execute: async () => pngBytes(2048, 2048).toString('base64'),
        toModelOutput: ({ output }) => ({
          type: 'content',
          value: [
            { type: 'text', text: 'The screen:' },
            { type: 'image-data', data: output as string, mediaType: 'image/png' },
          ],
        }),
      });
      await generateText({
        model: modelFor(api),
        tools: { screenshot },
        prepareStep: compactionPrepareStep(manager, { sessionId: `shots-${api}`, replyTokens: REPLY }),
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', image: pngBytes(2048, 2048) },
              { type: 'text', text: 'Check the screens.' },
            ],
          },
        ],
        maxOutputTokens: REPLY,
        stopWhen: stepCountIs(30),
      });
      expectEveryRequestFits();
      await manager.shutdown();
    });
  }
});

/**
 * OpenAI reasoning sent back without storage (`store: false`): the AI SDK keeps each reasoning
 * item's encrypted content in the reasoning part's provider options and sends it back as the
 * item's `encrypted_content`. The conversion counted the reasoning part's text only, so twenty
 * rounds of 4,000-character payloads (about 750 tokens each) were invisible to the manager.
 */
describe('AI SDK encrypted reasoning is counted', () => {
  it('middleware (responses, store: false): every request fits the window', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    const model = wrapLanguageModel({
      model: modelFor('responses'),
      middleware: compactionMiddleware(manager, { sessionId: 'encrypted' }),
    });
    const history: ModelMessage[] = [{ role: 'user', content: 'Probe every host.' }];
    for (let k = 0; k < 24; k++) {
      history.push(
        {
          role: 'assistant',
          content: [
            {
              type: 'reasoning',
              text: `Host ${k} next.`,
              providerOptions: {
                openai: { itemId: `rs_${k}`, reasoningEncryptedContent: `gAAA${k}`.padEnd(4_000, 'QUJD') },
              },
            },
            { type: 'tool-call', toolCallId: `call_${k}`, toolName: 'probe', input: { host: k } },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: `call_${k}`,
              toolName: 'probe',
              output: { type: 'text', value: `host ${k} is up` },
            },
          ],
        },
      );
      await generateText({
        model,
        messages: history,
        maxOutputTokens: REPLY,
        providerOptions: { openai: { store: false } },
      });
    }
    expectEveryRequestFits();
    await manager.shutdown();
  });
});
