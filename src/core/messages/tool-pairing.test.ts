import { describe, expect, it } from 'vitest';
import { type PairingInput, pairToolCalls } from './tool-pairing.js';

const user = (): PairingInput => ({ role: 'user', kind: 'message', toolCalls: [], toolResults: [] });
const assistant = (...ids: string[]): PairingInput => ({
  role: 'assistant',
  kind: 'message',
  toolCalls: ids.map((id) => ({ id })),
  toolResults: [],
});
const reasoning = (): PairingInput => ({
  role: 'assistant',
  kind: 'reasoning',
  toolCalls: [],
  toolResults: [],
});
const tool = (...ids: string[]): PairingInput => ({
  role: 'tool',
  kind: 'message',
  toolCalls: [],
  toolResults: ids.map((callId) => ({ callId })),
});

describe('pairToolCalls', () => {
  it('pairs reused ids with the call of their own round', () => {
    const messages = [
      user(),
      assistant('call_0'),
      tool('call_0'),
      assistant('call_0'),
      tool('call_0'),
      assistant(),
    ];
    const pairing = pairToolCalls(messages);
    expect(pairing.findings).toEqual([]);
    expect(pairing.callOf.get(2)).toEqual([{ message: 1, position: 0 }]);
    expect(pairing.callOf.get(4)).toEqual([{ message: 3, position: 0 }]);
    expect(pairing.round[1]).toBe(pairing.round[2]);
    expect(pairing.round[3]).toBe(pairing.round[4]);
    expect(pairing.round[1]).not.toBe(pairing.round[3]);
  });

  it('pairs parallel calls answered out of order, with reasoning and split call items (Responses)', () => {
    const messages = [user(), reasoning(), assistant('a'), assistant('b'), tool('b'), tool('a'), assistant()];
    const pairing = pairToolCalls(messages);
    expect(pairing.findings).toEqual([]);
    expect(pairing.callOf.get(4)).toEqual([{ message: 3, position: 0 }]);
    expect(pairing.callOf.get(5)).toEqual([{ message: 2, position: 0 }]);
    expect(new Set([1, 2, 3, 4, 5].map((i) => pairing.round[i]))).toEqual(new Set([pairing.round[1]]));
    expect(pairing.rounds[pairing.round[1]!]).toEqual({ start: 1, end: 5 });
  });

  it('reports a result whose call belongs to an earlier round as an orphan', () => {
    const pairing = pairToolCalls([user(), assistant('x'), tool('x'), assistant('y'), tool('x'), tool('y')]);
    expect(pairing.findings).toEqual([{ kind: 'orphan_result', index: 4, position: 0, callId: 'x' }]);
  });

  it('reports duplicate results and dangling calls (interrupted runs)', () => {
    const pairing = pairToolCalls([
      user(),
      assistant('a', 'b'),
      tool('a'),
      tool('a'),
      user(),
      assistant('c'),
    ]);
    expect(pairing.findings).toEqual([
      { kind: 'dangling_call', index: 1, position: 1, callId: 'b' },
      { kind: 'duplicate_result', index: 3, position: 0, callId: 'a' },
      { kind: 'dangling_call', index: 5, position: 0, callId: 'c' },
    ]);
  });

  it('is linear: 50,000 messages with one reused id', () => {
    const messages: PairingInput[] = [user()];
    for (let i = 0; i < 25_000; i++) messages.push(assistant('call_0'), tool('call_0'));
    const pairing = pairToolCalls(messages);
    expect(pairing.findings).toEqual([]);
    expect(pairing.rounds.length).toBe(25_000);
  });
});
