/**
 * Issue 38 point 3: the middleware converts only the messages of a conversation it has not
 * seen. Across calls of a growing conversation the manager gets the same Chat array, extended
 * by the new messages, the earlier Chat objects untouched; an old message replaced or edited
 * in place is converted again; a call made while another of the same conversation runs
 * converts on its own.
 */
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import type { ModelRequest } from 'langchain';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactionResult, CompactOptions } from '../../core/manager/manager-options.js';
import { compactionMiddleware } from './compaction-middleware.js';
import { ConversationChat } from './conversation-chat.js';

/** A manager that records the array each call hands it. */
function recordingManager(): { manager: CompactManager; inputs: unknown[][] } {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
  const inputs: unknown[][] = [];
  const compact = manager.compact.bind(manager);
  manager.compact = (<M>(id: string, messages: readonly M[], options?: CompactOptions) => {
    inputs.push(messages as unknown[]);
    return compact<M>(id, messages, options);
  }) as typeof manager.compact;
  return { manager, inputs };
}

function turns(n: number): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (let i = 0; i < n; i++) out.push(new HumanMessage(`question ${i}`), new AIMessage(`answer ${i}`));
  return out;
}

const call = (middleware: ReturnType<typeof compactionMiddleware>, messages: BaseMessage[]) =>
  middleware.wrapModelCall!(
    { messages, tools: [], runtime: {} } as unknown as ModelRequest,
    (async (request: ModelRequest) => {
      expect(request.messages.length).toBe(messages.length);
      return new AIMessage('ok');
    }) as never,
  );

describe('the LangChain middleware converts only what it has not seen', () => {
  it('a growing conversation: one Chat array, extended; earlier Chat objects reused', async () => {
    const { manager, inputs } = recordingManager();
    const middleware = compactionMiddleware(manager, { sessionId: 's' });
    const state = turns(50);
    await call(middleware, state);
    const first = [...inputs[0]!];
    for (let i = 0; i < 5; i++) {
      state.push(new HumanMessage(`follow-up ${i}`));
      await call(middleware, state);
    }
    expect(inputs).toHaveLength(6);
    for (const input of inputs) expect(input).toBe(inputs[0]);
    expect(inputs[0]!.length).toBe(105);
    for (const [k, chat] of first.entries()) expect(inputs[0]![k]).toBe(chat);
    await manager.shutdown();
  });

  it('an old message replaced or edited in place is converted again', () => {
    const conversations = new ConversationChat();
    const state = turns(5);
    const before = conversations.toChat(state);
    const firstChat = [...before.chat];
    before.release();
    state[3] = new AIMessage('answer 1, corrected');
    (state[5] as unknown as { content: string }).content = 'answer 2, edited in place';
    const after = conversations.toChat(state);
    after.release();
    expect(after.chat[2]).toBe(firstChat[2]);
    expect(after.chat[3]).not.toBe(firstChat[3]);
    expect((after.chat[3] as { content: string }).content).toBe('answer 1, corrected');
    expect((after.chat[5] as { content: string }).content).toBe('answer 2, edited in place');
    expect((after.chat[4] as { content: string }).content).toBe('question 2');
  });

  it('a call made while another of the conversation runs converts on its own', async () => {
    const conversations = new ConversationChat();
    const state = turns(3);
    const running = conversations.toChat(state);
    const longer = [...state, new HumanMessage('branch')];
    const meanwhile = conversations.toChat(longer);
    expect(meanwhile.chat).not.toBe(running.chat);
    expect(running.chat).toHaveLength(6);
    expect(meanwhile.chat).toHaveLength(7);
    running.release();
    meanwhile.release();
    expect(conversations.toChat(longer).chat).toBe(running.chat);
  });

  it('onCompaction still sees the result in the Chat form', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
    const seen: CompactionResult<unknown>[] = [];
    const middleware = compactionMiddleware(manager, { sessionId: 's', onCompaction: (r) => seen.push(r) });
    await call(middleware, turns(3));
    expect(seen[0]!.messages[0]).toMatchObject({ role: 'user', content: 'question 0' });
    expect(seen[0]!.messages[0]).not.toBeInstanceOf(HumanMessage);
    await manager.shutdown();
  });

  it('an old message of a long conversation edited in place is found by the rotating audit', () => {
    const conversations = new ConversationChat();
    const state = turns(1_500);
    conversations.toChat(state).release();
    (state[1_234] as unknown as { content: string }).content = 'answer 617, edited in place';
    // Fields of older messages are audited 512 per call (conversation-chat.ts).
    const bound = Math.ceil(state.length / 512) + 1;
    let foundAt = -1;
    for (let k = 0; k < bound && foundAt < 0; k++) {
      state.push(new HumanMessage(`follow-up ${k}`));
      const lease = conversations.toChat(state);
      if ((lease.chat[1_234] as { content: string }).content.endsWith('edited in place')) foundAt = k;
      lease.release();
    }
    expect(foundAt).toBeGreaterThanOrEqual(0);
  });

  it("hands the model the caller's own objects for what was kept, call after call", async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
    const middleware = compactionMiddleware(manager, { sessionId: 'own' });
    const state = turns(40);
    for (let k = 0; k < 4; k++) {
      state.push(new HumanMessage(`follow-up ${k}`));
      const sent: BaseMessage[][] = [];
      await middleware.wrapModelCall!(
        { messages: state, tools: [], runtime: {} } as unknown as ModelRequest,
        (async (request: ModelRequest) => {
          sent.push(request.messages);
          return new AIMessage('ok');
        }) as never,
      );
      expect(sent[0]).toHaveLength(state.length);
      for (const [i, message] of state.entries()) expect(sent[0]![i]).toBe(message);
      // A message replaced by the caller: the next call sends the replacement.
      if (k === 1) state[7] = new AIMessage('answer 3, replaced');
    }
    await manager.shutdown();
  });

  it('the first call of a long conversation converts in slices, to the same Chat messages', async () => {
    // Issue 47 point 2: converting 16k messages at once blocked the loop 142-432 ms.
    const state = turns(3_000);
    let turnsGiven = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turnsGiven++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const lease = await new ConversationChat().toChatInSlices(state);
    counting = false;
    expect(turnsGiven).toBeGreaterThan(0);
    const atOnce = new ConversationChat().toChat(state);
    expect(lease.chat).toHaveLength(6_000);
    expect(JSON.stringify(lease.chat)).toBe(JSON.stringify(atOnce.chat));
    lease.release();
    // Its next call extends the same array.
    state.push(new HumanMessage('one more'));
    const conversations = new ConversationChat();
    const first = await conversations.toChatInSlices(state.slice(0, 400));
    first.release();
    const next = await conversations.toChatInSlices(state.slice(0, 401));
    expect(next.chat).toBe(first.chat);
    expect(next.chat).toHaveLength(401);
  });
});
