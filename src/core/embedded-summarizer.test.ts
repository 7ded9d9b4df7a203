import { describe, expect, it } from 'vitest';
import { EmbeddedSummarizer } from './embedded-summarizer.js';
import type { CompactMessage } from './message.js';
import { tokenCounterFor } from './token-counter.js';

const counter = tokenCounterFor('gpt-4o');
const countTokens = (text: string) => counter.countText(text);

let n = 0;
function msg(
  role: CompactMessage['role'],
  text: string,
  extra: Partial<CompactMessage> = {},
): CompactMessage {
  return {
    id: `m${n}`,
    index: n++,
    role,
    kind: 'message',
    text,
    toolCalls: [],
    toolResults: [],
    format: 'openai-chat',
    raw: {},
    ...extra,
  };
}

const session: CompactMessage[] = [
  msg(
    'user',
    'Goal: add rate limiting to the gateway in src/gateway/limiter.ts. Success criteria: p99 latency under 50 ms and no 429s for internal callers. Ticket PLAT-812.',
  ),
  msg('user', 'Constraint: we must not add a new database; budget is $200/month. Never log API keys.'),
  msg(
    'assistant',
    'I decided to use a token bucket in Redis because it keeps state shared across the 4 replicas.',
    {
      toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"src/gateway/limiter.ts"}' }],
    },
  ),
  msg('tool', '', {
    toolResults: [{ callId: 'c1', output: 'export function limit(req) {\n  return true;\n}' }],
  }),
  msg(
    'assistant',
    'Updated limiter.ts: replaced limit() with a Redis token bucket (refill 100 req/s). See https://redis.io/docs/latest/develop/use/patterns/',
    {
      toolCalls: [
        {
          id: 'c2',
          name: 'edit_file',
          arguments: '{"path":"src/gateway/limiter.ts","function":"function limit"}',
        },
      ],
    },
  ),
  msg('tool', '', { toolResults: [{ callId: 'c2', output: 'ok' }] }),
  msg(
    'assistant',
    'Tests are still failing in test/limiter.test.ts on branch feature/rate-limit; next step is to mock the clock.',
    {
      toolCalls: [{ id: 'c3', name: 'run_tests', arguments: '{}' }],
    },
  ),
  msg('tool', '', {
    toolResults: [
      { callId: 'c3', output: 'FAIL test/limiter.test.ts > refills tokens\nExpected 100, got 99' },
    ],
  }),
];

const summarizer = new EmbeddedSummarizer();
const run = (strategy: string, extra: Partial<Parameters<EmbeddedSummarizer['summarizeSync']>[0]> = {}) =>
  summarizer.summarizeSync({ strategy, messages: session, maxTokens: 600, countTokens, ...extra });

describe('EmbeddedSummarizer', () => {
  it('task_state extracts goals, constraints, entities, decisions, open items and tool facts', () => {
    const text = run('task_state');
    for (const heading of [
      '## Goals and success criteria',
      '## Constraints',
      '## Key entities and identifiers',
      '## Decisions',
      '## Outstanding actions and blockers',
      '## Facts from tool results',
      '## Sources',
    ]) {
      expect(text).toContain(heading);
    }
    for (const fact of [
      'PLAT-812',
      'src/gateway/limiter.ts',
      '50 ms',
      '$200',
      'feature/rate-limit',
      'https://redis.io/docs/latest/develop/use/patterns/',
      'token bucket',
      'must not add a new database',
      'mock the clock',
      'FAIL test/limiter.test.ts',
    ]) {
      expect(text).toContain(fact);
    }
  });

  it('never invents: every bullet is text from the input', () => {
    const source = session
      .map((m) =>
        [
          m.text,
          ...m.toolCalls.flatMap((c) => [c.name, c.arguments]),
          ...m.toolResults.map((r) => r.output),
        ].join('\n'),
      )
      .join('\n')
      .replace(/\s+/g, ' ');
    for (const line of run('task_state').split('\n')) {
      if (!line.startsWith('- ')) continue;
      const item = line.slice(2).replace(/…$/, '');
      if (item.includes(' → ')) {
        const [call] = item.split(' → ');
        expect(source).toContain(call!.slice(0, call!.indexOf('(')));
        continue;
      }
      expect(source).toContain(item.slice(0, 40));
    }
  });

  it('decision_log writes a chronological ledger', () => {
    const text = run('decision_log');
    const ledger = text.split('\n').filter((l) => /^- \[\d+\]/.test(l));
    expect(ledger.length).toBeGreaterThanOrEqual(3);
    for (const line of ledger) expect(line.split(' :: ')).toHaveLength(4);
    const steps = ledger.map((l) => Number(/\[(\d+)\]/.exec(l)![1]));
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(text).toContain('because it keeps state shared');
  });

  it('code_delta lists files with what changed', () => {
    const text = run('code_delta');
    expect(text).toContain('## Code changes');
    expect(text).toMatch(/- src\/gateway\/limiter\.ts: .*edit_file/);
  });

  it('brief is short bullets with citations', () => {
    const text = run('brief');
    expect(text).toContain('## Key citations');
    expect(countTokens(text)).toBeLessThan(countTokens(run('task_state')));
  });

  it('stays within max tokens, however small', () => {
    for (const maxTokens of [20, 60, 150, 400]) {
      for (const strategy of ['task_state', 'brief', 'decision_log', 'code_delta']) {
        expect(countTokens(run(strategy, { maxTokens }))).toBeLessThanOrEqual(maxTokens);
      }
    }
  });

  it('merges the previous summary so its facts carry forward', () => {
    const previous =
      '## Goals and success criteria\n- Migrate billing to Stripe (ticket BILL-7)\n## Custom notes\n- keep the EU region';
    const text = run('task_state', { previousSummary: previous });
    expect(text).toContain('BILL-7');
    expect(text).toContain('keep the EU region');
    expect(text.indexOf('BILL-7')).toBeLessThan(text.indexOf('PLAT-812'));
  });

  it('records a note and is deterministic', async () => {
    const a = await summarizer.summarize({
      sessionId: 's',
      strategy: 'task_state',
      messages: session,
      maxTokens: 500,
      countTokens,
      note: 'user-requested',
    });
    const b = await summarizer.summarize({
      sessionId: 's',
      strategy: 'task_state',
      messages: session,
      maxTokens: 500,
      countTokens,
      note: 'user-requested',
    });
    expect(a.text).toBe(b.text);
    expect(a.text.startsWith('Note: user-requested')).toBe(true);
    expect(a.summarizer).toBe('embedded');
  });
});
