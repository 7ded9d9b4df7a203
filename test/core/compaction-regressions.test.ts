/**
 * Minimal repros of invariant violations the property tests found, one per bug, so each
 * stays visible (and guarded) on its own. Each name says what must hold.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { MemorySessionStore } from '../../src/core/session/session-store.js';

const words = (tag: string, n = 150) => Array.from({ length: n }, (_, i) => `${tag}x${i}`).join(' ');
const smallWindow = { hardCapBuffer: 100, keepRecentTurns: 1, keepToolIoPairs: 1, maxSummaryTokens: 200 };

describe('order below the threshold', () => {
  it('preflight below the threshold returns the history in its original order (a protected message mid-history is not hoisted)', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
    const history = [
      { role: 'user', content: 'A' },
      { role: 'assistant', content: 'B' },
      { role: 'user', content: 'C', meta: { protected: true } },
      { role: 'assistant', content: 'D' },
    ];
    const result = await manager.compact('below', history);
    expect(result.applied).toBe(false);
    expect(result.messages).toEqual([
      { role: 'user', content: 'A' },
      { role: 'assistant', content: 'B' },
      { role: 'user', content: 'C' },
      { role: 'assistant', content: 'D' },
    ]);
  });

  it('preflight below the threshold keeps a mid-conversation system message in place', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
    const history = [
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'system', content: 'The user switched to the admin workspace.' },
      { role: 'user', content: 'second question' },
    ];
    expect(await manager.preflight('below-system', history)).toEqual(history);
  });
});

describe('Responses reasoning items', () => {
  it('a reasoning item stays right before the protected function_call it belongs to', async () => {
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 1_500,
      policy: { ...smallWindow, hardCapBuffer: 0, maxSummaryTokens: 32 },
    });
    const items = [
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'need the file' }],
        encrypted_content: 'enc',
      },
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_1',
        name: 'read_file',
        arguments: '{"path":"a.ts"}',
        meta: { protected: true },
      },
      { type: 'function_call_output', call_id: 'call_1', output: 'export const a = 1;' },
    ];
    const result = await manager.compact('reasoning', items, { force: true });
    const types = result.messages.map((m) => (m as { type: string }).type);
    // OpenAI rejects a function_call whose reasoning item does not precede it.
    expect(types).toEqual(['reasoning', 'function_call', 'function_call_output']);
  });
});

describe('protected messages', () => {
  it('meta.protected added to a message the manager has already seen is honoured', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 4_000, policy: smallWindow });
    const policyMessage = { role: 'user', content: `policy ${words('p')}` };
    await manager.preflight('late-meta-a', [policyMessage]);
    const history = [
      { ...policyMessage, meta: { protected: true, label: 'Policy' } },
      { role: 'assistant', content: words('a') },
      { role: 'user', content: words('b') },
      { role: 'assistant', content: words('c') },
    ];
    const result = await manager.compact('late-meta-b', history, { force: true });
    expect(result.kept.pinned).toBe(1);
    expect(result.messages[0]).toEqual(policyMessage);
  });

  it('persisted view: a protected message stays pinned when another manager shares the session store', async () => {
    const store = new MemorySessionStore();
    const first = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 4_000,
      policy: smallWindow,
      store,
    });
    const history = [
      { role: 'user', content: `policy ${words('p')}`, meta: { protected: true } },
      { role: 'assistant', content: words('a') },
      { role: 'user', content: words('b') },
      { role: 'assistant', content: words('c') },
    ];
    const view = (await first.compact('shared', history, { force: true })).messages;
    expect(view[0]).toEqual({ role: 'user', content: `policy ${words('p')}` });
    // A restarted process: same store, new manager, the caller hands back the stored view.
    const second = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 4_000,
      policy: smallWindow,
      store,
    });
    const next = await second.compact(
      'shared',
      [...view, { role: 'user', content: words('d') }, { role: 'assistant', content: words('e') }],
      {
        force: true,
      },
    );
    expect(next.kept.pinned).toBe(1);
    expect(next.messages[0]).toEqual({ role: 'user', content: `policy ${words('p')}` });
  });

  it('persisted view: a protected message stays pinned when the first preflight did not compact', async () => {
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 2_500,
      policy: {
        triggerPct: 0.3,
        keepRecentTurns: 1,
        keepToolIoPairs: 1,
        maxSummaryTokens: 32,
        hardCapBuffer: 0,
      },
    });
    const protectedCall = {
      role: 'assistant',
      content: 'checking the policy',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }],
      meta: { protected: true },
    };
    const first = [protectedCall, { role: 'tool', tool_call_id: 'c1', content: 'policy file contents' }];
    // Below the threshold: nothing is compacted, but meta is stripped from what the caller stores.
    const view = await manager.preflight('early-view', first);
    expect(view).toHaveLength(2);
    const next = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c2', type: 'function', function: { name: 'read', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c2', content: words('x', 500) },
    ];
    const result = await manager.compact('early-view', [...view, ...next], { force: true });
    expect(result.kept.pinned).toBe(2);
    expect(result.messages.slice(0, 2)).toEqual(view);
  });
});

describe('repeated messages', () => {
  it('persisted view: a repeated user message ("continue") is kept after an earlier copy was summarized', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 3_000, policy: smallWindow });
    let view: unknown[] = [];
    for (let t = 0; t < 8; t++) {
      const turn = [
        { role: 'user', content: 'continue' },
        { role: 'assistant', content: `step ${t}: ${words(`s${t}`, 200)}` },
      ];
      view = await manager.preflight('repeat-view', [...view, ...turn]);
      // The newest user message is always sent.
      expect(view.at(-2), `turn ${t}`).toEqual({ role: 'user', content: 'continue' });
    }
  });

  it('raw history: a repeated user message ("continue") is kept after an earlier copy was summarized', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 3_000, policy: smallWindow });
    const raw: unknown[] = [];
    for (let t = 0; t < 8; t++) {
      raw.push(
        { role: 'user', content: 'continue' },
        { role: 'assistant', content: `step ${t}: ${words(`s${t}`, 200)}` },
      );
      const out = await manager.preflight('repeat-raw', raw);
      expect(out.at(-2), `turn ${t}`).toEqual({ role: 'user', content: 'continue' });
    }
  });
});
