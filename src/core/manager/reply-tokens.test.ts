/**
 * `replyTokens`: the reply a call asks for is kept free below the window (providers refuse a
 * prompt that passes the window with it), with a hundredth of the window more for the
 * provider's count of its own wire format.
 */
import { describe, expect, it } from 'vitest';
import { chatTurns } from '../../../test/support/manager-fixtures.js';
import { isCompactError } from '../errors.js';
import { CompactManager } from './compact-manager.js';

const WINDOW = 10_000;

describe('replyTokens', () => {
  it('keeps the reply and a hundredth of the window free, where the buffer alone would not', async () => {
    const history = chatTurns(40, 400);
    const plain = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW, redaction: false });
    const replying = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW, redaction: false });
    const total = plain.estimate(history).total;
    expect(total).toBeGreaterThan(WINDOW);
    const without = await plain.compact('s', history);
    const reply = 6000;
    const withReply = await replying.compact('s', history, { replyTokens: reply });
    expect(withReply.tokensAfter).toBeLessThanOrEqual(WINDOW - reply - WINDOW / 100);
    // The same history compacted without it may fill the room the reply needs.
    expect(without.tokensAfter).toBeGreaterThan(WINDOW - reply - WINDOW / 100);
    await plain.shutdown();
    await replying.shutdown();
  });

  it('compacts a request under the trigger whose reply would not fit beside it', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW, redaction: false });
    const history = chatTurns(8, 400);
    const tokens = manager.estimate(history).total;
    const reply = WINDOW - tokens + 200;
    expect(tokens).toBeLessThan(WINDOW * manager.policy.triggerPct);
    const untouched = await manager.compact('a', history);
    expect(untouched.applied).toBe(false);
    const fitted = await manager.compact('b', history, { replyTokens: reply });
    expect(fitted.applied).toBe(true);
    expect(fitted.tokensAfter + reply).toBeLessThanOrEqual(WINDOW);
    await manager.shutdown();
  });

  it('leaves a call alone when the reply is within the buffer, or not below the window', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW, redaction: false });
    const history = chatTurns(8, 400);
    for (const replyTokens of [0, 500, WINDOW, WINDOW * 3]) {
      const result = await manager.compact(`s${replyTokens}`, history, { replyTokens });
      expect(result.applied).toBe(false);
    }
    await manager.shutdown();
  });

  it.each([-1, 1.5, '100', Number.NaN])('rejects %j naming replyTokens', async (replyTokens) => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    await expect(manager.compact('s', [], { replyTokens: replyTokens as number })).rejects.toSatisfy(
      (error: unknown) =>
        isCompactError(error, 'invalid_config') && /replyTokens/.test((error as Error).message),
    );
    await manager.shutdown();
  });
});
