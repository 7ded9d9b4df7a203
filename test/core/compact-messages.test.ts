import { describe, expect, it } from 'vitest';
import { isCompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { compactMessages } from '../../src/index.js';

type ChatMessage = {
  role: string;
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
};

/** A coding session: one request with a constraint, then `rounds` tool calls with large outputs. */
function session(rounds: number): ChatMessage[] {
  const history: ChatMessage[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Fix the flaky login test. Never touch the payments module.' },
  ];
  for (let i = 0; i < rounds; i += 1) {
    const id = `call_${i}`;
    history.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/f${i}.ts"}` } },
      ],
    });
    const lines = Array.from(
      { length: 40 },
      (_, line) => `export const value${i}_${line} = compute(${line}, "${i}");`,
    );
    history.push({ role: 'tool', tool_call_id: id, content: lines.join('\n') });
  }
  return history;
}

function unansweredCalls(messages: readonly ChatMessage[]): string[] {
  const answered = new Set(messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id));
  return messages
    .flatMap((m) => (m.tool_calls ?? []).map((call) => call.id))
    .filter((id) => !answered.has(id));
}

describe('compactMessages (one call, no session)', () => {
  it('returns a request that fits unchanged, and never mutates the input', async () => {
    const history = session(3);
    const snapshot = JSON.stringify(history);
    const result = await compactMessages(history, { model: 'gpt-4o', maxTokens: 32_000 });
    expect(result.applied).toBe(false);
    expect(result.messages).toEqual(history);
    expect(result.tokensAfter).toBe(result.tokensBefore);
    expect(JSON.stringify(history)).toBe(snapshot);
  });

  it('compacts a request over the budget to within it: the request kept, pairs whole, levels reported', async () => {
    const history = session(60);
    const snapshot = JSON.stringify(history);
    const maxTokens = 8_000;
    const before = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 }).estimate(
      history,
    ).total;
    expect(before).toBeGreaterThan(maxTokens * 2);
    const result = await compactMessages(history, { model: 'gpt-4o', maxTokens });
    expect(result.applied).toBe(true);
    expect(result.tokensBefore).toBe(before);
    expect(result.tokensAfter).toBeLessThanOrEqual(maxTokens);
    // What the result reports is what it is.
    const after = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 }).estimate(
      result.messages,
    ).total;
    expect(after).toBe(result.tokensAfter);
    expect(result.levels.length).toBeGreaterThan(0);
    expect(JSON.stringify(result.messages)).toContain('Never touch the payments module');
    expect(unansweredCalls(result.messages)).toEqual([]);
    expect(result.messages.at(-1)).toEqual(history.at(-1));
    expect(JSON.stringify(history)).toBe(snapshot);
  });

  it('force compacts a request that fits', async () => {
    const history = session(12);
    const result = await compactMessages(history, { model: 'gpt-4o', maxTokens: 64_000, force: true });
    expect(result.applied).toBe(true);
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
  });

  it('rejects a bad budget or a policy key it sets itself, naming the field', async () => {
    for (const maxTokens of [undefined, 0, 100, 1.5, Number.NaN]) {
      const error = await compactMessages(session(1), { maxTokens: maxTokens as number }).catch((e) => e);
      expect(isCompactError(error) && error.code).toBe('invalid_config');
      expect(String(error.message)).toMatch(/^maxTokens /);
    }
    const error = await compactMessages(session(1), {
      maxTokens: 4_000,
      policy: { triggerPct: 0.5 } as never,
    }).catch((e) => e);
    expect(isCompactError(error) && error.code).toBe('invalid_config');
    expect(String(error.message)).toMatch(/policy\.triggerPct/);
  });

  it('rejects an option that is not its own, naming compactMessages (a manager option it sets itself too)', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ targetTokens: 2_000 }, /^targetTokens is not a compactMessages option \(the budget is maxTokens\)/],
      [{ maxContextTokens: 100_000 }, /^maxContextTokens is not a compactMessages option/],
      [{ store: {} }, /^store is not a compactMessages option/],
      [{ max_tokens: 4_000 }, /^max_tokens is not a compactMessages option \(did you mean maxTokens\?\)/],
    ];
    for (const [extra, message] of cases) {
      const error = await compactMessages(session(1), { maxTokens: 4_000, ...extra } as never).catch(
        (e) => e,
      );
      expect(isCompactError(error) && error.code).toBe('invalid_config');
      expect(String(error.message)).toMatch(message);
    }
  });

  it('ends at or under the target (half of maxTokens) when the latest turn holds large tool outputs', async () => {
    const { syntheticSession } = await import('../../src/testing/synthetic-session.js');
    // Seeds that ended between the target and maxTokens (4,151-5,779 for 8,000) before.
    for (const seed of [13, 15, 19]) {
      const history = syntheticSession({ turns: 20, seed, toolDensity: 3, resultChars: 4000 });
      const result = await compactMessages(history, { model: 'gpt-4o', maxTokens: 8_000 });
      expect(result.applied).toBe(true);
      expect(result.tokensBefore).toBeGreaterThan(8_000);
      expect(result.tokensAfter, `seed ${seed}`).toBeLessThanOrEqual(4_000);
      const check = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
      expect(check.estimate(result.messages).total).toBe(result.tokensAfter);
    }
  });

  it('protected messages larger than the target still fit maxTokens (the target is then out of reach)', async () => {
    const big = {
      role: 'user',
      content: `Review this file, all of it:\n${'const line = "keep every line of this file";\n'.repeat(500)}`,
      meta: { protected: true },
    };
    const result = await compactMessages([...session(30), big], { model: 'gpt-4o', maxTokens: 8_000 });
    expect(result.tokensAfter).toBeLessThanOrEqual(8_000);
    expect(result.tokensAfter).toBeGreaterThan(4_000);
  });
  it('sends the newest message as given when the request fits maxTokens with it whole (issue 43)', async () => {
    // A tool result of ~4,300 tokens, newest: over the target (4,000) alone, far under maxTokens.
    // Aimed at the target, the cascade cut it before (to fit 4,000) although 8,000 held it.
    const output = Array.from({ length: 480 }, (_, line) => `row ${line}: status=ok latency=${line % 97}ms`);
    const call: ChatMessage = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_big', type: 'function', function: { name: 'query', arguments: '{}' } }],
    };
    const newest: ChatMessage = { role: 'tool', tool_call_id: 'call_big', content: output.join('\n') };
    const history = [...session(30), call, newest];
    const probe = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    const newestTokens = probe.estimate([newest]).total;
    expect(newestTokens).toBeGreaterThan(4_000);
    const result = await compactMessages(history, { model: 'gpt-4o', maxTokens: 8_000 });
    expect(result.applied).toBe(true);
    expect(result.messages.at(-1)).toEqual(newest);
    expect(result.tokensAfter).toBeLessThanOrEqual(8_000);
    expect(probe.estimate(result.messages).total).toBe(result.tokensAfter);
    expect(unansweredCalls(result.messages as ChatMessage[])).toEqual([]);
  });
});
