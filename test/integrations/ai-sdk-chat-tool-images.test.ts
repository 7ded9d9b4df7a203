/**
 * Review 84d: the AI SDK's OpenAI Chat provider (`openai.chat`, and the OpenAI-compatible
 * `<name>.chat` providers) sends a tool result's `content` output (a screenshot beside its text)
 * as its JSON, the base64 in the text: a 400x400 screenshot is some 18,600 tokens there. The
 * middleware counted it as an image (a few hundred tokens) and sent a request of 18,652 tokens
 * to a window of 8,000, which OpenAI refuses (context_length_exceeded). It now counts what the
 * chat provider sends; the Responses provider sends the image as an image and is counted so.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type ModelMessage, wrapLanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { compactionMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { checkSoundRequest } from '../../src/testing/assert-sound-request.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { chatProblems } from '../support/provider-rules.js';
import { pngBytes } from '../support/test-images.js';

const WINDOW = 8_000;
const SCREENSHOT = pngBytes(400, 400, true).toString('base64');

/** A screenshot round (its result an image beside text), then a small round. */
const history = [
  { role: 'user', content: 'Take a screenshot of the dashboard, then check the queue.' },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'shot', input: {} }] },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'c1',
        toolName: 'shot',
        output: {
          type: 'content',
          value: [
            { type: 'text', text: 'dashboard' },
            { type: 'image-data', data: SCREENSHOT, mediaType: 'image/png' },
          ],
        },
      },
    ],
  },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c2', toolName: 'queue', input: {} }] },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'c2',
        toolName: 'queue',
        output: { type: 'text', value: 'depth 3' },
      },
    ],
  },
] as ModelMessage[];

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('AI SDK: a screenshot in a tool result', () => {
  it.each(['chat', 'responses'] as const)('%s: the request fits the window', async (api) => {
    server = await startProviderTestServer({ handler: () => ({ text: 'ok' }) });
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    const provider = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
    await generateText({
      model: wrapLanguageModel({
        model: api === 'chat' ? provider.chat('gpt-4o') : provider.responses('gpt-4o'),
        middleware: compactionMiddleware(manager, { sessionId: `shot-${api}` }),
      }),
      messages: history,
    });
    await manager.shutdown();
    const request = server.requests[0]!;
    expect(checkSoundRequest({ request: request.body, maxContextTokens: WINDOW })).toEqual([]);
    if (api === 'chat') expect(chatProblems(request.body)).toEqual([]);
    // The screenshot itself is sent where it is counted as an image.
    if (api === 'responses') expect(request.rawBody).toContain(SCREENSHOT);
  });
});
