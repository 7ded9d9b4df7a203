/**
 * Review 88: `meta` of the wrong type was read as no `meta` at all. `meta: 'protected'` (or
 * `meta: { protected: 'true' }`) left the message unprotected without a word, and the
 * policy it held was summarized away like any other turn; `meta: { id: 7 }` fell back to a
 * content id silently. Now each is an `invalid_messages` error naming the message and the field,
 * in every format and from every entry point, and a `meta` that is `null` still means none.
 */
import { describe, expect, it } from 'vitest';
import { compactMessages } from '../../src/core/compact-messages.js';
import { isCompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';

async function refusal(messages: unknown[]): Promise<string[]> {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
  const out: string[] = [];
  for (const call of [
    () => manager.preflight('s', messages as never),
    async () => manager.estimate(messages as never),
    () => compactMessages(messages as never, { model: 'gpt-4o', maxTokens: 8_000 }),
  ]) {
    const error = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCompactError(error, 'invalid_messages')).toBe(true);
    out.push((error as Error).message);
  }
  await manager.shutdown();
  return out;
}

const chat = (meta: unknown) => [
  { role: 'user', content: 'hello' },
  { role: 'developer', content: 'Never touch payments.', meta },
];
const anthropic = (meta: unknown) => [
  { role: 'user', content: [{ type: 'text', text: 'hello' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'hi' }], meta },
];
const responses = (meta: unknown) => [
  { role: 'user', content: 'hello' },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }], meta },
];

describe('meta of the wrong type', () => {
  it.each([
    ['a string', 'protected', /^messages\[1\]\.meta: must be an object \(got string\)/],
    ['an array', ['protected'], /^messages\[1\]\.meta: must be an object \(got array\)/],
    ['protected as a string', { protected: 'true' }, /^messages\[1\]\.meta\.protected: must be a boolean/],
    ['an id as a number', { id: 7 }, /^messages\[1\]\.meta\.id: must be a string/],
    ['a label as a number', { label: 3 }, /^messages\[1\]\.meta\.label: must be a string/],
  ])('%s is invalid_messages naming the field, in every format', async (_name, meta, pattern) => {
    for (const messages of [chat(meta), anthropic(meta), responses(meta)]) {
      for (const message of await refusal(messages)) expect(message).toMatch(pattern);
    }
  });

  it('meta: null and a well-typed meta are accepted; meta is stripped from what is sent', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    for (const meta of [null, { protected: true, label: 'Policy', id: 'policy-1', mine: 5 }]) {
      const sent = await manager.preflight('ok', chat(meta) as never);
      expect(sent[1]).toEqual({ role: 'developer', content: 'Never touch payments.' });
    }
    await manager.shutdown();
  });
});
