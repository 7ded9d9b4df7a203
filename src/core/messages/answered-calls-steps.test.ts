import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runSteps } from '../time-slice.js';
import type { CompactMessage } from './message.js';
import { answeredCallsSteps, pairToolCalls } from './tool-pairing.js';

type Spec = ['user'] | ['reasoning'] | ['summary'] | ['assistant', string[]] | ['tool', string[]];

/** A message with just what pairing and the answers read. */
function message([kind, ids = []]: Spec, index: number): CompactMessage {
  return {
    role: kind === 'tool' ? 'tool' : kind === 'user' ? 'user' : 'assistant',
    kind: kind === 'reasoning' ? 'reasoning' : 'message',
    text: kind === 'summary' ? '<COMPACT-SUMMARY v1>' : '',
    toolCalls: kind === 'assistant' ? ids.map((id) => ({ id, name: 'search', arguments: '{}' })) : [],
    toolResults:
      kind === 'tool'
        ? ids.map((callId, r) => ({
            callId,
            output: `out ${index}.${r}`,
            ...(r % 2 ? { isError: true } : {}),
          }))
        : [],
  } as unknown as CompactMessage;
}

/** The answers as tool-facts.ts read them before they came in steps (from `callOf`). */
function answersOfCallOf(messages: readonly CompactMessage[]): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [index, sites] of pairToolCalls(messages).callOf) {
    sites.forEach((site, r) => {
      const result = messages[index]!.toolResults[r];
      if (site && result) out.push([`${site.message}:${site.position}`, result]);
    });
  }
  return out;
}

const ids = fc.array(fc.constantFrom('call_0', 'call_1', 'x', 'y'), { maxLength: 3 });
const spec: fc.Arbitrary<Spec> = fc.oneof(
  fc.constant<Spec>(['user']),
  fc.constant<Spec>(['reasoning']),
  fc.constant<Spec>(['summary']),
  ids.map((list): Spec => ['assistant', list]),
  ids.map((list): Spec => ['tool', list]),
);

describe('answeredCallsSteps', () => {
  it('answers every call as the pairing of the whole history does, in the same order', () => {
    fc.assert(
      fc.property(fc.array(spec, { maxLength: 600 }), (specs) => {
        const messages = specs.map(message);
        const answers = runSteps(answeredCallsSteps(messages));
        expect([...answers]).toEqual(answersOfCallOf(messages));
      }),
      { numRuns: 200 },
    );
  });

  it('yields while pairing a long history, not only once it is paired (issue 47)', () => {
    const messages: CompactMessage[] = [];
    for (let turn = 0; messages.length < 4_000; turn++)
      messages.push(
        message(['user'], messages.length),
        message(['assistant', [`call_${turn}`]], messages.length + 1),
        message(['tool', [`call_${turn}`]], messages.length + 2),
      );
    const steps = answeredCallsSteps(messages);
    let yields = 0;
    for (let step = steps.next(); !step.done; step = steps.next()) yields++;
    // One step every 256 messages while pairing, and again while reading the answers.
    expect(yields).toBeGreaterThanOrEqual(2 * Math.floor(messages.length / 256));
  });
});
