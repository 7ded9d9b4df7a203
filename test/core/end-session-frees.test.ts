/**
 * Issue 38 point 4: `endSession` frees everything the manager holds for a session, also
 * while the caller keeps its history (the message objects the parses were keyed by).
 * Checked with WeakRefs to the parsed messages the manager made (a token counter sees each
 * one) after full garbage collections: none may survive the session's end.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { TokenCounter } from '../../src/core/counting/token-counter.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { CompactMessage } from '../../src/core/messages/message.js';
import type { SessionStore } from '../../src/core/session/session-store.js';
import { MemorySessionStore } from '../../src/core/session/session-store.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Full collections after the current job (WeakRefs made in it are held until it ends). */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
}

/** A character counter that keeps a WeakRef to (a part of) every parse it is asked to count. */
function watchingCounter(refs: WeakRef<object>[]): TokenCounter {
  return {
    name: 'chars',
    exact: true,
    requestOverhead: 0,
    countText: (text) => text.length,
    countMessage: (message: CompactMessage) => {
      // The copy handed here shares its arrays with the parse the manager keeps: those of tool
      // calls and results (a message without any shares one frozen empty array with every parse).
      if (message.toolCalls.length > 0) refs.push(new WeakRef(message.toolCalls));
      if (message.toolResults.length > 0) refs.push(new WeakRef(message.toolResults));
      return message.text.length + 4;
    },
    countTools: (tools) => JSON.stringify(tools).length,
  };
}

/** `turns` turns of three messages: a question, a tool call with its text, the tool's result. */
function history(turns: number, seed: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: 'user', content: `${seed} question ${i} `.padEnd(300, 'q') });
    out.push({
      role: 'assistant',
      content: `${seed} answer ${i} `.padEnd(300, 'a'),
      tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'look', arguments: '{}' } }],
    });
    out.push({ role: 'tool', tool_call_id: `call_${i}`, content: `${seed} result ${i}` });
  }
  return out;
}

/** A shared-store stand-in (not the in-process class), so the fail-open copies are in play. */
function sharedStore(): SessionStore {
  const inner = new MemorySessionStore();
  return {
    name: 'shared',
    get: (id) => inner.get(id),
    set: (id, state, options) => inner.set(id, state, options),
    delete: (id) => inner.delete(id),
    acquireLock: (id, ttl) => inner.acquireLock(id, ttl),
  };
}

describe('endSession frees what the manager holds, whatever the caller keeps', () => {
  it('no parse of the session survives while the caller still holds every message object', async () => {
    const refs: WeakRef<object>[] = [];
    const manager = new CompactManager({
      maxContextTokens: 20_000,
      tokenCounter: watchingCounter(refs),
      store: sharedStore(),
      policy: { keepRecentTurns: 2 },
    });
    // The caller's history, kept alive for the whole test; it grows, compacts, grows again.
    const kept = history(120, 'kept');
    for (let end = 30; end <= kept.length; end += 30) await manager.compact('kept', kept.slice(0, end));
    expect((await manager.state('kept'))?.version).toBeGreaterThan(0);
    await collect();
    expect(refs.filter((ref) => ref.deref() !== undefined).length).toBeGreaterThan(0);

    manager.endSession('kept');
    await collect();
    const alive = refs.filter((ref) => ref.deref() !== undefined).length;
    expect(alive).toBe(0);
    expect(manager.cacheStatus()).toMatchObject({
      sessions: 0,
      bytes: 0,
      cachedMessages: 0,
      storedStates: 0,
    });
    // Still the caller's: the history is intact and the session resumes from its stored state.
    expect(kept.length).toBe(360);
    const resumed = await manager.compact('kept', kept);
    expect(JSON.stringify(resumed.messages)).toContain('<COMPACT-SUMMARY v');
    await manager.shutdown();
  });

  it('the parses of sessions the cache cap dropped go with them; ending the others leaves none', async () => {
    // Issue 47 point 4: ending 500 of 1,000 sessions left 49,597 parses in the content cache,
    // those of sessions whose indexed histories the caps had dropped (endSession walks only
    // the histories still held).
    const refs: WeakRef<object>[] = [];
    const manager = new CompactManager({
      maxContextTokens: 1_000_000,
      tokenCounter: watchingCounter(refs),
      cacheMaxBytes: 400_000,
    });
    const sessions = 30;
    for (let i = 0; i < sessions; i++) await manager.compact(`s${i}`, history(40, `s${i}`));
    const held = manager.cacheStatus();
    expect(held.sessions).toBeGreaterThan(0);
    expect(held.sessions).toBeLessThan(sessions);
    // Every cached parse belongs to a session still held (120 messages each).
    expect(held.cachedMessages).toBeLessThanOrEqual(held.sessions * 120);
    for (let i = 0; i < sessions; i++) manager.endSession(`s${i}`);
    await collect();
    expect(manager.cacheStatus()).toMatchObject({ sessions: 0, bytes: 0, cachedMessages: 0 });
    expect(refs.filter((ref) => ref.deref() !== undefined).length).toBe(0);
    await manager.shutdown();
  });
});
