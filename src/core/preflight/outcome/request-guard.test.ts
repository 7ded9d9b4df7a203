import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../manager/compact-manager.js';
import type { ViewEntry } from '../view/session-view.js';
import {
  compactionFault,
  foldedCallIds,
  foldedCallIdsSteps,
  newestFault,
  withNewestAsGiven,
} from './request-guard.js';

type Spec = { role?: string; calls?: string[]; results?: string[]; pinned?: boolean; summary?: boolean };

/** A view entry with just what the guard reads. */
function entry(spec: Spec, index: number): ViewEntry {
  const wire = { index };
  return {
    item: {
      index,
      id: `m${index}`,
      entry: {
        wire,
        ...(spec.summary ? { summaryVersion: 1 } : {}),
        parsed: {
          role: spec.role ?? (spec.results ? 'tool' : 'assistant'),
          toolCalls: (spec.calls ?? []).map((id) => ({ id, name: 'search', arguments: '{}' })),
          toolResults: (spec.results ?? []).map((callId) => ({ callId, output: 'x' })),
        },
      },
    },
    pinned: spec.pinned === true,
    round: -1,
    wire,
    tokens: 10,
    originalTokens: 10,
  } as unknown as ViewEntry;
}

const entries = (specs: Spec[]) => specs.map(entry);
const none = new Set<string>();

describe('request guard: tool pairing in the provider order', () => {
  it('accepts chat rounds, parallel Responses calls and Anthropic turns', () => {
    const chat = entries([
      { role: 'user' },
      { calls: ['a', 'b'] },
      { results: ['a'] },
      { results: ['b'] },
      { role: 'assistant' },
    ]);
    expect(compactionFault(chat, undefined, none, 'openai-chat', undefined)).toBeUndefined();
    const responses = entries([
      { role: 'user' },
      { calls: ['a'] },
      { calls: ['b'] },
      { results: ['a'] },
      { results: ['b'] },
    ]);
    expect(compactionFault(responses, undefined, none, 'openai-responses', undefined)).toBeUndefined();
    const anthropic = entries([
      { role: 'user' },
      { calls: ['a', 'b'] },
      { role: 'user', results: ['a', 'b'] },
    ]);
    expect(compactionFault(anthropic, undefined, none, 'anthropic', undefined)).toBeUndefined();
  });

  it('names an unanswered call, an orphan result and the step that made them', () => {
    // The AI SDK case: the result came back as an assistant text after its call.
    const textForResult = entries([{ role: 'user' }, { calls: ['call_0004'] }, { role: 'assistant' }]);
    expect(compactionFault(textForResult, undefined, none, 'openai-chat', undefined)).toEqual({
      rule: 'tool_pairing',
      message: 'tool call "call_0004" has no result after it',
      step: 'assemble',
    });
    const orphan = entries([{ role: 'user' }, { results: ['x'] }]);
    expect(compactionFault(orphan, undefined, new Set(['x']), 'openai-chat', undefined)).toMatchObject({
      rule: 'tool_pairing',
      step: 'summarize',
    });
  });

  it('counts the summary it adds and a trusted one the history carries', () => {
    const list = entries([{ role: 'user', summary: true }, { role: 'user' }]);
    expect(compactionFault(list, { role: 'user' }, none, 'openai-chat', undefined)).toBeUndefined();
    expect(compactionFault(list, { role: 'user' }, none, 'openai-chat', list[0]!.item)).toMatchObject({
      rule: 'summary',
      message: 'the request carries 2 summaries',
    });
  });
});

describe('request guard: the newest message', () => {
  const list = entries([{ role: 'user' }, { calls: ['a'] }, { results: ['a'] }]);
  const prepared = { indexed: { items: list.map((e) => e.item) } } as never;

  it('is one identity check when the newest goes as given', () => {
    expect(
      newestFault(
        list.map((e) => e.wire),
        prepared,
        list,
      ),
    ).toBeUndefined();
  });

  it('names the level that rewrote it and undoes that rewrite only', () => {
    const cleared = {
      ...list[2]!,
      wire: { cleared: true },
      rewrite: { kind: 'cleared', ref: 'tool-1' },
    } as ViewEntry;
    const view = [list[0]!, list[1]!, cleared];
    const sent = view.map((e) => e.wire);
    expect(newestFault(sent, prepared, view)).toEqual({
      rule: 'newest_message',
      message: 'the newest message (#2) was sent cleared',
      step: 'clear_tool_results',
    });
    expect(withNewestAsGiven(sent, prepared, view)).toEqual([list[0]!.wire, list[1]!.wire, list[2]!.wire]);
    expect(sent[2]).toEqual({ cleared: true });
    // Level d's cut of a newest message the request cannot hold whole is its last resort.
    const cut = { ...cleared, rewrite: { kind: 'cut', ref: 'cut-1' } } as ViewEntry;
    expect(newestFault(sent, prepared, [list[0]!, list[1]!, cut], () => true)).toBeUndefined();
    expect(newestFault(sent, prepared, [list[0]!, list[1]!, cut], () => false)?.step).toBe('cut_oversized');
  });
});

describe('request guard through the manager', () => {
  it('sends sound requests without a compact.error over a compacting tool loop', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 3_000 });
    const errors: unknown[] = [];
    manager.on('compact.error', (event) => errors.push(event.properties));
    const history: unknown[] = [{ role: 'user', content: 'Search everything.' }];
    let applied = 0;
    for (let k = 0; k < 30; k++) {
      history.push(
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'search', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: `c${k}`, content: `hit ${k} `.repeat(120) },
      );
      const result = await manager.compact('guard', history);
      if (result.applied) applied++;
      expect(result.messages.at(-1)).toBe(history.at(-1));
    }
    expect(applied).toBeGreaterThan(2);
    expect(errors).toEqual([]);
    await manager.shutdown();
  });
});

describe('foldedCallIdsSteps', () => {
  it('gathers the ids foldedCallIds does, in steps over a long fold (issue 47)', () => {
    const folded = Array.from({ length: 3_000 }, (_, k) =>
      entry(k % 2 ? { results: [`c${k - 1}`, `c${k % 7}`] } : { calls: [`c${k}`] }, k),
    ).map((e) => e.item);
    const steps = foldedCallIdsSteps(folded);
    let yields = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) yields++;
    expect([...step.value]).toEqual([...foldedCallIds(folded)]);
    expect(yields).toBeGreaterThanOrEqual(2);
  });
});
