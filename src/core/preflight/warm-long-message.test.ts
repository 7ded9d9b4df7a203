/**
 * Issue 47 point 2: a warm call that appended a message of megabytes hashed and counted it in
 * one block (fewer than 64 new messages were indexed at once); now in slices, with the result
 * of a manager that is given the same history in one call.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../manager/compact-manager.js';

const log = 'GET /api/v1/users?id=42 200 took 12ms "ok"\n'.repeat(100_000);

function history(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [{ role: 'system', content: 'You are a coder.' }];
  for (let i = 0; i < 6; i++) {
    out.push({ role: 'user', content: `step ${i}: look at the logs` });
    out.push({ role: 'assistant', content: `looked ${i}` });
  }
  return out;
}

const appended = [
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_log', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: log },
  { role: 'user', content: 'what failed?' },
];

describe('a warm call that appends a message of megabytes', () => {
  it('gives the loop a turn while hashing and counting it, and sends what one call would', async () => {
    const options = { model: 'gpt-4o', maxContextTokens: 1_000_000 };
    const warm = new CompactManager(options);
    await warm.ready();
    const messages = history();
    await warm.compact('s', messages);
    messages.push(...appended);
    // The tool result read through a getter: each read notes whether the loop has turned yet
    // and whether the codec's parse made it (the parse follows the message's hash).
    let turned = false;
    const reads: { turned: boolean; parse: boolean }[] = [];
    const tool = { role: 'tool', tool_call_id: 'c1' };
    Object.defineProperty(tool, 'content', {
      enumerable: true,
      get: () => {
        reads.push({ turned, parse: /openai-chat\.ts/.test(new Error().stack ?? '') });
        return log;
      },
    });
    messages[messages.length - 2] = tool;
    setImmediate(() => {
      turned = true;
    });
    const result = await warm.compact('s', messages);
    // Hashing 4 MB takes several slices: the loop turned before the parse (on the old code the
    // hash and the parse ran in one stretch).
    const parse = reads.find((read) => read.parse);
    expect(parse).toEqual({ turned: true, parse: true });
    const once = new CompactManager(options);
    const whole = await once.compact('s', [...history(), ...appended]);
    expect(result.tokensBefore).toBe(whole.tokensBefore);
    expect(result.messages).toEqual(whole.messages);
    await Promise.all([warm.shutdown(), once.shutdown()]);
  });
});
