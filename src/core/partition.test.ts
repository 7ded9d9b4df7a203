import { describe, expect, it } from 'vitest';
import type { ParsedMessage } from './formats/message-codec.js';
import {
  assertNoOrphanResults,
  buildUnits,
  isPinned,
  type PartitionInput,
  pinToolGroups,
  selectRecent,
} from './partition.js';

function m(role: ParsedMessage['role'], extra: Partial<ParsedMessage> = {}): PartitionInput {
  return { parsed: { role, kind: 'message', toolCalls: [], toolResults: [], ...extra } };
}
const call = (...ids: string[]) =>
  m('assistant', { toolCalls: ids.map((id) => ({ id, name: 't', arguments: '{}' })) });
const result = (...ids: string[]) =>
  m('tool', { toolResults: ids.map((callId) => ({ callId, output: 'r' })) });
const all = (list: readonly unknown[]) => list.map((_, i) => i);

describe('isPinned', () => {
  const rule = { rolesNeverPrune: ['system', 'developer'], protectedFlag: 'protected' };
  it('pins never-prune roles and protected messages', () => {
    expect(isPinned(m('system'), rule)).toBe(true);
    expect(isPinned(m('developer'), rule)).toBe(true);
    expect(isPinned(m('user'), rule)).toBe(false);
    expect(isPinned(m('user', { meta: { protected: true } }), rule)).toBe(true);
    expect(isPinned(m('user', { meta: { protected: 'yes' as unknown as boolean } }), rule)).toBe(false);
    expect(isPinned(m('user', { meta: { keep: true } }), { ...rule, protectedFlag: 'keep' })).toBe(true);
  });
});

describe('buildUnits', () => {
  it('groups parallel calls with all of their results, interleaved or not', () => {
    const messages = [m('user'), call('a', 'b'), result('a'), m('assistant'), result('b'), m('user')];
    const units = buildUnits(messages, all(messages));
    expect(units.map((u) => u.members)).toEqual([[0], [1, 2, 3, 4], [5]]);
    expect(units.map((u) => u.tool)).toEqual([false, true, false]);
    expect(units.map((u) => u.startsTurn)).toEqual([true, false, true]);
  });

  it('joins separate call items answered out of order (Responses parallel calls)', () => {
    const messages = [call('a'), call('b'), result('b'), result('a'), call('c'), result('c')];
    expect(buildUnits(messages, all(messages)).map((u) => u.members)).toEqual([
      [0, 1, 2, 3],
      [4, 5],
    ]);
  });

  it('attaches reasoning items to the unit after them', () => {
    const reasoning = m('assistant', { kind: 'reasoning' });
    const messages = [m('user'), reasoning, call('a'), result('a'), reasoning, m('assistant'), reasoning];
    expect(buildUnits(messages, all(messages)).map((u) => u.members)).toEqual([[0], [1, 2, 3], [4, 5], [6]]);
  });

  it('keeps a call without results as its own tool unit', () => {
    const messages = [m('user'), call('pending')];
    expect(buildUnits(messages, all(messages)).map((u) => [u.members, u.tool])).toEqual([
      [[0], false],
      [[1], true],
    ]);
  });
});

describe('selectRecent', () => {
  it('keeps the last 6 of 20 turns and the last 4 of 10 tool pairs', () => {
    const messages: PartitionInput[] = [];
    for (let t = 0; t < 20; t++) {
      messages.push(m('user'), m('assistant'));
      if (t < 10) messages.push(call(`c${t}`), result(`c${t}`));
    }
    const units = buildUnits(messages, all(messages));
    const selection = selectRecent(units, 6, 4);
    expect(selection.recentTurns).toBe(6);
    expect(selection.toolPairs).toBe(4);
    const keptUsers = [...selection.kept].filter((i) => messages[i]!.parsed.role === 'user');
    expect(keptUsers).toHaveLength(6);
    const keptCalls = [...selection.kept]
      .filter((i) => messages[i]!.parsed.toolCalls.length > 0)
      .map((i) => messages[i]!.parsed.toolCalls[0]!.id);
    expect(keptCalls.sort()).toEqual(['c6', 'c7', 'c8', 'c9']);
  });

  it('treats trailing messages without a user message as one turn', () => {
    const messages = [call('a'), result('a'), m('assistant'), m('assistant')];
    const selection = selectRecent(buildUnits(messages, all(messages)), 3, 1);
    expect(selection.recentTurns).toBe(1);
    expect([...selection.kept].sort()).toEqual([0, 1, 2, 3]);
  });
});

describe('orphans and pinned groups', () => {
  it('rejects an orphan tool result with its index', () => {
    expect(() => assertNoOrphanResults([m('user'), result('ghost')])).toThrow(
      /messages\[1\]\.tool result: answers call "ghost"/,
    );
    expect(() => assertNoOrphanResults([call('a'), result('a')])).not.toThrow();
  });

  it('pins the whole tool group of a pinned message', () => {
    const messages = [m('user'), call('a', 'b'), result('a'), result('b'), call('c'), result('c')];
    const pinned = [false, false, true, false, false, false];
    pinToolGroups(messages, pinned);
    expect(pinned).toEqual([false, true, true, true, false, false]);
  });
});
