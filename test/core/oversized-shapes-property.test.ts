/**
 * Review 80: what the world sends that is larger than the window, as a property. Random rounds
 * in the three wire formats whose tool arguments (under any key, wire-field names included:
 * `data`, `url`, `name`, `id`, `type` ...), tool outputs (one to three text blocks), assistant
 * text and user messages are each anything from a few tokens to two and a half windows. Every
 * request must come out sound (checkSoundRequest: pairs, the newest message as given or cut
 * around the marker, within the budget), arguments still JSON, the caller's messages untouched;
 * never `insufficient_budget` (nothing here is pinned). Fails on the code before the cut fixes
 * of review 80 (insufficient_budget on JSON arguments with several long strings, on wire-field
 * argument names, on tool outputs of several blocks).
 *
 * Reproduce a failure with the seed fast-check prints: FC_SEED=<seed> npx vitest run <this file>
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { checkSoundRequest } from '../../src/testing/index.js';
import { scaled } from '../support/test-scale.js';
import { deepFreeze } from './support/wire-facts.js';

const SEED = Number(process.env.FC_SEED ?? 20_261_130);
const RUNS = Number(process.env.FC_RUNS ?? scaled(200, 40));
const WINDOW = 8_000;
const KEYS = [
  'data',
  'url',
  'name',
  'id',
  'type',
  'content',
  'text',
  'status',
  'path',
  'signature',
  'image_url',
];

/** About `tokens` tokens of text, 45 a line. */
const text = (tokens: number, tag: string) =>
  Array.from(
    { length: Math.max(1, Math.round(tokens / 45)) },
    (_, i) => `${tag} ${i}: ${'value '.repeat(40)}`,
  ).join('\n');

/** A size: short (a word) half the time, else 5% to 250% of the window. */
const size = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 5, max: 250 }).map((pct) => Math.round((pct * WINDOW) / 100)),
);
const sized = (tokens: number, tag: string) => (tokens === 0 ? 'ok' : text(tokens, tag));

const roundArb = fc.record({
  args: fc.array(fc.tuple(fc.constantFrom(...KEYS), size), { minLength: 1, maxLength: 3 }),
  outputs: fc.array(size, { minLength: 1, maxLength: 3 }),
  say: size,
});
const caseArb = fc.record({
  format: fc.constantFrom('openai-chat' as const, 'openai-responses' as const, 'anthropic' as const),
  ask: size,
  rounds: fc.array(roundArb, { minLength: 1, maxLength: 6 }),
  tail: fc.option(size, { nil: undefined }),
});
type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function history(c: Case): unknown[] {
  const user = (content: string) =>
    c.format === 'openai-responses' ? { type: 'message', role: 'user', content } : { role: 'user', content };
  const out: unknown[] = [user(`Do the task. ${sized(c.ask, 'ask')}`)];
  c.rounds.forEach((round, r) => {
    const id = `call_${r}`;
    const args = Object.fromEntries(
      round.args.map(([key, tokens], k) => [`${key}${k || ''}`, sized(tokens, 'arg')]),
    );
    const outputs = round.outputs.map((tokens) => sized(tokens, 'out'));
    const say = round.say === 0 ? undefined : text(round.say, 'say');
    if (c.format === 'openai-chat') {
      out.push({
        role: 'assistant',
        content: say ?? null,
        tool_calls: [{ id, type: 'function', function: { name: 'tool', arguments: JSON.stringify(args) } }],
      });
      out.push({
        role: 'tool',
        tool_call_id: id,
        content: outputs.length > 1 ? outputs.map((o) => ({ type: 'text', text: o })) : outputs[0],
      });
    } else if (c.format === 'anthropic') {
      out.push({
        role: 'assistant',
        content: [
          ...(say ? [{ type: 'text', text: say }] : []),
          { type: 'tool_use', id, name: 'tool', input: args },
        ],
      });
      out.push({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: id, content: outputs.map((o) => ({ type: 'text', text: o })) },
        ],
      });
    } else {
      if (say)
        out.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: say }] });
      out.push({ type: 'function_call', call_id: id, name: 'tool', arguments: JSON.stringify(args) });
      out.push({
        type: 'function_call_output',
        call_id: id,
        output: outputs.length > 1 ? outputs.map((o) => ({ type: 'input_text', text: o })) : outputs[0],
      });
    }
  });
  if (c.tail !== undefined) out.push(user(`And now? ${sized(c.tail, 'tail')}`));
  return out;
}

/** The arguments of every call in `messages` that are not JSON. */
function brokenArguments(messages: readonly unknown[]): string[] {
  const broken: string[] = [];
  const check = (args: unknown) => {
    try {
      JSON.parse(String(args));
    } catch {
      broken.push(String(args).slice(0, 80));
    }
  };
  for (const message of messages as Record<string, unknown>[]) {
    for (const call of (message.tool_calls as { function: { arguments: unknown } }[] | undefined) ?? [])
      check(call.function.arguments);
    if (message.type === 'function_call') check(message.arguments);
  }
  return broken;
}

describe('messages larger than the window, in any shape', () => {
  it(`every request sound and within the budget (${RUNS} cases, seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const model = c.format === 'anthropic' ? 'claude-sonnet-4-6' : 'gpt-4o';
        const given = history(c);
        const copy = structuredClone(given);
        const manager = new CompactManager({ model, maxContextTokens: WINDOW });
        try {
          const sent = await manager.preflight('oversized', deepFreeze(given));
          const violations = checkSoundRequest({
            request: sent,
            format: c.format,
            given,
            model,
            maxContextTokens: WINDOW,
            budgetTokens: manager.budget,
          });
          expect(violations).toEqual([]);
          expect(brokenArguments(sent)).toEqual([]);
          expect(given).toEqual(copy);
        } finally {
          await manager.shutdown();
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
