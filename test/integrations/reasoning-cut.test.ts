/**
 * Review 80 (a new user's hostile review): an assistant turn of the verbatim suffix too long for
 * the window (a report written before a tool call) is cut by the last resort. Through the AI
 * SDK and LangChain integrations the turn's reasoning (Anthropic thinking with its signature,
 * OpenAI reasoning with its item id) went back as plain visible text: the reasoning part was
 * dropped and its words pasted at the head of the text. The provider refuses that turn (with
 * thinking on, a tool-loop turn must open with its signed thinking block; a function_call with
 * an id needs its reasoning item) and the model sees its hidden reasoning as something it said.
 * Now the leading reasoning goes back as it came, and only the text after it is cut; a cut that
 * reached into the reasoning itself (the reasoning the longest text of the turn, or the turn
 * trimmed when every other message is cut) is not made: the turn goes as given.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { compactMessages } from '../../src/adapters/ai-sdk/index.js';
import { chatToLangChain, langChainToChat } from '../../src/adapters/langchain/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';

const WINDOW = 8_000;
const ROUNDS = 20;
const REPORT = 'Report line: host checked, latency nominal, disk at 40%. '.repeat(600);
const output = (k: number) =>
  Array.from({ length: 20 }, (_, i) => `row ${k}.${i} status=ok id=${(k * 97 + i) % 1013}`).join('\n');

const newManager = () => new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: WINDOW });

describe('the cut of an assistant turn keeps its reasoning', () => {
  it('AI SDK: the reasoning part comes back as given, the text after it is cut', async () => {
    const history: Record<string, unknown>[] = [
      { role: 'user', content: [{ type: 'text', text: 'Audit.' }] },
    ];
    for (let k = 0; k < ROUNDS; k++) {
      history.push({
        role: 'assistant',
        content: [
          {
            type: 'reasoning',
            text: `Check host ${k} next.`,
            providerOptions: { anthropic: { signature: `sig-${k}` } },
          },
          { type: 'text', text: k === ROUNDS - 1 ? REPORT : `Checking ${k}.` },
          { type: 'tool-call', toolCallId: `t${k}`, toolName: 'probe', input: { host: k } },
        ],
      });
      history.push({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: `t${k}`,
            toolName: 'probe',
            output: { type: 'text', value: output(k) },
          },
        ],
      });
    }
    const manager = newManager();
    const { messages, result } = await compactMessages(manager, 'ai-sdk', history, { kind: 'prompt' });
    await manager.shutdown();
    expect(result.levels.map((level) => level.level)).toContain('cut_oversized');
    const given = history.at(-2) as { content: Record<string, unknown>[] };
    const sent = messages.at(-2) as { content: Record<string, unknown>[] };
    expect(sent).not.toBe(given);
    expect(sent.content[0]).toBe(given.content[0]);
    const text = sent.content.find((part) => part.type === 'text') as { text: string };
    expect(text.text.startsWith('Report line')).toBe(true);
    expect(text.text.length).toBeLessThan(REPORT.length);
    expect(sent.content.at(-1)).toBe(given.content[2]);
  });

  it('LangChain: the thinking block comes back as given, the text after it is cut', async () => {
    const history: (AIMessage | HumanMessage | ToolMessage)[] = [new HumanMessage('Audit.')];
    for (let k = 0; k < ROUNDS; k++) {
      history.push(
        new AIMessage({
          content: [
            { type: 'thinking', thinking: `Check host ${k} next.`, signature: `sig-${k}` },
            { type: 'text', text: k === ROUNDS - 1 ? REPORT : `Checking ${k}.` },
            { type: 'tool_use', id: `t${k}`, name: 'probe', input: { host: k } },
          ],
          tool_calls: [{ id: `t${k}`, name: 'probe', args: { host: k }, type: 'tool_call' }],
        }),
      );
      history.push(new ToolMessage({ content: output(k), tool_call_id: `t${k}` }));
    }
    const manager = newManager();
    const result = await manager.compact('langchain', langChainToChat(history));
    await manager.shutdown();
    expect(result.levels.map((level) => level.level)).toContain('cut_oversized');
    const back = chatToLangChain(result.messages, { AIMessage, HumanMessage, SystemMessage, ToolMessage });
    const given = history.at(-2) as AIMessage;
    const sent = back.at(-2) as AIMessage;
    expect(sent).not.toBe(given);
    const content = sent.content as Record<string, unknown>[];
    expect(content[0]).toBe((given.content as unknown[])[0]);
    expect(content[1]?.type).toBe('text');
    expect(String(content[1]?.text).startsWith('Report line')).toBe(true);
    expect(String(content[1]?.text).length).toBeLessThan(REPORT.length);
    expect(sent.tool_calls?.map((call) => call.id)).toEqual([`t${ROUNDS - 1}`]);
  });

  it('AI SDK: a cut that would reach into the reasoning leaves the turn as given', async () => {
    // The latest round alone is over the window: its call's arguments and result are cut, and
    // every other message as far as it goes before the newest, the turn's reasoning too.
    const history: Record<string, unknown>[] = [
      { role: 'user', content: [{ type: 'text', text: 'Write the report and file it.' }] },
      {
        role: 'assistant',
        content: [
          {
            type: 'reasoning',
            text: 'The report is long; write it in one call, then file it. '.repeat(5),
            providerOptions: { anthropic: { signature: 'sig-0' } },
          },
          {
            type: 'tool-call',
            toolCallId: 't0',
            toolName: 'write_file',
            input: { path: 'report.md', data: REPORT },
          },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 't0',
            toolName: 'write_file',
            output: { type: 'text', value: REPORT },
          },
        ],
      },
    ];
    const manager = newManager();
    const { messages, result } = await compactMessages(manager, 'ai-sdk-deep', history, { kind: 'prompt' });
    await manager.shutdown();
    expect(result.levels.map((level) => level.level)).toContain('cut_oversized');
    const given = history[1] as { content: Record<string, unknown>[] };
    const sent = messages.find((message) => message.role === 'assistant') as {
      content: Record<string, unknown>[];
    };
    expect(sent.content[0]).toBe(given.content[0]);
    expect(sent.content.filter((part) => part.type === 'text')).toEqual([]);
  });

  it('LangChain: a cut that would reach into the thinking leaves the turn as given', async () => {
    const thinking = {
      type: 'thinking',
      thinking: 'Write it in one call, then file it. '.repeat(6),
      signature: 'sig-0',
    };
    const history = [
      new HumanMessage('Write the report and file it.'),
      new AIMessage({
        content: [
          thinking,
          { type: 'tool_use', id: 't0', name: 'write_file', input: { path: 'report.md', data: REPORT } },
        ],
        tool_calls: [
          { id: 't0', name: 'write_file', args: { path: 'report.md', data: REPORT }, type: 'tool_call' },
        ],
      }),
      new ToolMessage({ content: REPORT, tool_call_id: 't0' }),
    ];
    const manager = newManager();
    const result = await manager.compact('langchain-deep', langChainToChat(history));
    await manager.shutdown();
    expect(result.levels.map((level) => level.level)).toContain('cut_oversized');
    const back = chatToLangChain(result.messages, { AIMessage, HumanMessage, SystemMessage, ToolMessage });
    const sent = back.find((message) => message.getType() === 'ai') as AIMessage;
    expect((sent.content as unknown[])[0]).toBe(thinking);
  });
});
