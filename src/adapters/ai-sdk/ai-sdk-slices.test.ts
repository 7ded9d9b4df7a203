/**
 * Issue 47 point 2: a first call of a long history converted every message to the Chat form
 * in one block (16k messages: 60-90 ms), and turned the kept ones back in another. Both now
 * give the event loop turns; the messages are the same as the unsliced conversions give.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { aiSdkToChat, aiSdkToChatInSlices, chatToAiSdk, chatToAiSdkInSlices } from './ai-sdk-messages.js';
import { compactionMiddleware } from './index.js';

/** A prompt of `turns` user / assistant tool call / tool result triples. */
function prompt(turns: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: 'user', content: [{ type: 'text', text: `check file ${i}` }] });
    out.push({
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: `call_${i}`, toolName: 'read', input: { path: `src/f${i}.ts` } },
      ],
    });
    out.push({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: `call_${i}`,
          toolName: 'read',
          output: { type: 'text', value: `export const v${i} = ${i};` },
        },
      ],
    });
  }
  out.push({ role: 'user', content: [{ type: 'text', text: 'and now?' }] });
  return out;
}

describe('AI SDK conversions of a long history', () => {
  it("gives the loop a turn before the middleware's first call has read the whole prompt", async () => {
    const messages = prompt(20_000);
    // The last message tells when the conversion reached it.
    const last = messages.at(-1)!;
    const content = last.content;
    let lastRead = false;
    Object.defineProperty(last, 'content', {
      enumerable: true,
      get: () => {
        lastRead = true;
        return content;
      },
    });
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 2_000_000_000 });
    const middleware = compactionMiddleware(manager, { sessionId: 'slices' });
    const call = middleware.transformParams!({ params: { prompt: messages }, type: 'generate' } as never);
    let readWhenTimerRan: boolean | undefined;
    setImmediate(() => {
      readWhenTimerRan = lastRead;
    });
    const params = (await call) as { prompt: unknown[] };
    expect(readWhenTimerRan).toBe(false);
    expect(params.prompt).toHaveLength(messages.length);
    expect(params.prompt.every((message, i) => message === messages[i])).toBe(true);
    await manager.shutdown();
  });

  it('turns many messages back in slices, as the unsliced conversion does', async () => {
    const messages = prompt(40_000) as never[];
    const chat = await aiSdkToChatInSlices(messages);
    expect(chat).toEqual(aiSdkToChat(messages));
    const back = chatToAiSdkInSlices(chat, 'prompt');
    let resolved = false;
    void back.then(() => {
      resolved = true;
    });
    let resolvedWhenTimerRan: boolean | undefined;
    setImmediate(() => {
      resolvedWhenTimerRan = resolved;
    });
    const turned = await back;
    expect(resolvedWhenTimerRan).toBe(false);
    expect(turned).toEqual(chatToAiSdk(chat, 'prompt'));
    expect(turned.every((message, i) => message === messages[i])).toBe(true);
  });
});
