/**
 * Review 81d (a new user's trial): the mistakes a caller makes through the public API come back
 * as typed errors naming the field, with the caller's messages left as given. Before: a message
 * holding a BigInt threw a bare TypeError from JSON.stringify; `maxTokens: '8000'` read
 * "(got 8000)", as if the number were refused; a misspelt option (`maxTokenz`,
 * `policy.triggerPcT`) got no hint, only other casings did.
 */
import { describe, expect, it } from 'vitest';
import { CompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { compactMessages } from '../../src/index.js';

/** The error `work` throws (it must throw a CompactError). */
async function caught(work: () => unknown): Promise<CompactError> {
  try {
    await work();
  } catch (error) {
    expect(error).toBeInstanceOf(CompactError);
    return error as CompactError;
  }
  throw new Error('expected a CompactError');
}

describe('caller mistakes: typed errors naming the field, input untouched', () => {
  it('a message holding a BigInt: invalid_messages naming its index, the message untouched', async () => {
    const messages = [
      { role: 'user', content: 'hello' },
      { role: 'user', content: 'again', meta: { label: 'x' }, ticket: 10n },
    ];
    const before = messages.map((message) => ({ ...message }));
    for (const work of [
      () => compactMessages(messages, { model: 'gpt-4o', maxTokens: 8_000 }),
      () => new CompactManager({ model: 'gpt-4o' }).preflight('s', messages),
    ]) {
      const error = await caught(work);
      expect(error.code).toBe('invalid_messages');
      expect(error.message).toMatch(/^messages\[1\]: contains a BigInt/);
    }
    expect(messages).toEqual(before);
  });

  it('a number given as a string is shown quoted', async () => {
    const error = await caught(() =>
      compactMessages([{ role: 'user', content: 'hi' }], {
        model: 'gpt-4o',
        maxTokens: '8000' as unknown as number,
      }),
    );
    expect(error.code).toBe('invalid_config');
    expect(error.message).toBe('maxTokens must be an integer >= 256 (got "8000")');
    const manager = await caught(
      () => new CompactManager({ model: 'gpt-4o', maxContextTokens: '128k' as unknown as number }),
    );
    expect(manager.message).toBe('maxContextTokens must be an integer >= 256 (got "128k")');
  });

  it('a misspelt option names the one meant', async () => {
    const options = { model: 'gpt-4o', maxTokenz: 8_000 } as unknown as { model: string; maxTokens: number };
    const error = await caught(() => compactMessages([{ role: 'user', content: 'hi' }], options));
    expect(error.message).toBe('maxTokenz is not a compactMessages option (did you mean maxTokens?)');
    const manager = await caught(() => new CompactManager({ model: 'gpt-4o', maxContextTokenz: 1 } as never));
    expect(manager.message).toBe(
      'maxContextTokenz is not a CompactManager option (did you mean maxContextTokens?)',
    );
    const policy = await caught(
      () => new CompactManager({ model: 'gpt-4o', policy: { triggerPcT: 0.5 } } as never),
    );
    expect(policy.message).toBe('policy.triggerPcT is not a policy option (did you mean triggerPct?)');
    const far = await caught(() => new CompactManager({ model: 'gpt-4o', frobnicate: 1 } as never));
    expect(far.message).toBe('frobnicate is not a CompactManager option');
  });
});
