/**
 * Issue 47 point 1 for the LangChain.js middleware: a fresh middleware and manager (a new
 * process) on a session the store knows send the model exactly what the middleware that
 * served the session all along sends, on its first call and on the next.
 */
import * as classes from '@langchain/core/messages';
import type { ModelRequest } from 'langchain';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { MemorySessionStore } from '../../core/session/session-store.js';
import { syntheticSession } from '../../testing/synthetic-session.js';
import { chatToLangChain, compactionMiddleware } from './index.js';

const options = { model: 'gpt-4o', maxContextTokens: 50_000_000 } as const;

/** What the model was given, message by message. */
function seen(messages: readonly classes.BaseMessage[]): string {
  return JSON.stringify(
    messages.map((m) => {
      const fields = m as unknown as { content: unknown; tool_calls?: unknown; tool_call_id?: unknown };
      return [m.getType(), fields.content, fields.tool_calls ?? null, fields.tool_call_id ?? null];
    }),
  );
}

/** Whether the manager had indexed the session when the model was called, by call. */
const indexedAtModel: boolean[] = [];

/** A middleware over `manager` whose calls return what the model was given. */
function modelCalls(manager: CompactManager) {
  const middleware = compactionMiddleware(manager, { sessionId: 'lc' });
  return async (messages: classes.BaseMessage[]) => {
    let given = '';
    await middleware.wrapModelCall!(
      { messages, tools: [], runtime: {} } as unknown as ModelRequest,
      (async (request: ModelRequest) => {
        indexedAtModel.push(manager.cacheStatus().sessions > 0);
        given = seen(request.messages);
        return new classes.AIMessage('ok');
      }) as never,
    );
    return given;
  };
}

describe('the LangChain middleware in a fresh process', () => {
  it('sends what the middleware that served the session sends, on its first call and the next', async () => {
    const chat = syntheticSession({ turns: 300, seed: 17, toolDensity: 2.5, resultChars: 300 }).filter(
      (m) => (m as { role?: string }).role !== 'system',
    );
    expect(chat.length).toBeGreaterThan(1_000);
    const store = new MemorySessionStore();
    const ask = (text: string) => ({ role: 'user', content: text });
    const first = [...chat, ask('and the tests?')];
    const second = [...first, { role: 'assistant', content: 'passing' }, ask('ship it')];
    // The session served by a middleware in an earlier process (its record written after).
    const served = new CompactManager({ ...options, store });
    const serve = modelCalls(served);
    await serve(chatToLangChain(chat, classes));
    await served.flush();
    const warmFirst = await serve(chatToLangChain(first, classes));
    const warmSecond = await serve(chatToLangChain(second, classes));
    await served.shutdown();
    // The state as a new process reads it back; the manager of the earlier process stopped
    // after the session's first call.
    const store2 = new MemorySessionStore();
    const earlier = new CompactManager({ ...options, store: store2 });
    await modelCalls(earlier)(chatToLangChain(chat, classes));
    await earlier.shutdown();
    // Its first call decided from a bound; the exact view made after it left the quick record.
    expect(await store2.get('lc::quick')).toBeDefined();
    const fresh = new CompactManager({ ...options, store: store2 });
    const call = modelCalls(fresh);
    expect(await call(chatToLangChain(JSON.parse(JSON.stringify(first)), classes))).toBe(warmFirst);
    // Answered from the session's quick record: nothing indexed (nor converted) before the model call.
    expect(indexedAtModel.at(-1)).toBe(false);
    await fresh.flush();
    expect(await call(chatToLangChain(JSON.parse(JSON.stringify(second)), classes))).toBe(warmSecond);
    await fresh.shutdown();
  });
});
