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

describe('EmbeddedSummarizer under a tight budget', () => {
  // A long session: identifiers and decisions early, then many routine tool calls.
  const noisy: CompactMessage[] = [...session];
  for (let i = 0; i < 40; i++) {
    noisy.push(
      msg('assistant', 'Let me look at the surrounding code.', {
        toolCalls: [{ id: `r${i}`, name: 'read_file', arguments: `{"path":"src/util/helper${i % 5}.ts"}` }],
      }),
      msg('tool', '', {
        toolResults: [
          {
            callId: `r${i}`,
            output: `[File: src/util/helper${i % 5}.ts (${100 + i} lines total)]\n1: export const x = ${i};\nDuration ${i}.5s`,
          },
        ],
      }),
    );
  }
  const tight = (strategy: string, maxTokens = 260) =>
    summarizer.summarizeSync({ strategy, messages: noisy, maxTokens, countTokens });

  it('keeps identifiers, constraints and decisions before routine tool calls', () => {
    const text = tight('task_state');
    expect(countTokens(text)).toBeLessThanOrEqual(260);
    for (const fact of ['PLAT-812', 'feature/rate-limit', 'must not add a new database', 'token bucket']) {
      expect(text).toContain(fact);
    }
  });

  it('drops repetitive counters from tool output and file names already in their path', () => {
    const text = summarizer.summarizeSync({
      strategy: 'task_state',
      messages: noisy,
      maxTokens: 2000,
      countTokens,
    });
    expect(text).not.toMatch(/^- \d+ lines$/m);
    expect(text).not.toMatch(/^- \d+\.5s$/m);
    expect(text).not.toMatch(/^- limiter\.ts$/m);
    expect(text).toMatch(/^- src\/gateway\/limiter\.ts$/m);
  });

  it('shows a repeated tool call once, with its latest result', () => {
    const text = summarizer.summarizeSync({
      strategy: 'task_state',
      messages: noisy,
      maxTokens: 4000,
      countTokens,
    });
    const reads = text.split('\n').filter((l) => l.startsWith('- read_file({"path":"src/util/helper0.ts"})'));
    expect(reads).toHaveLength(1);
    expect(reads[0]).toContain('(135 lines total)');
  });

  it('lists kept items in their original order', () => {
    const text = tight('task_state', 400);
    const constraints = text.split('## Constraints\n')[1]!.split('\n\n')[0]!.split('\n');
    const positions = constraints.map((line) => noisy.findIndex((m) => m.text.includes(line.slice(2, 30))));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('carries the previous summary forward when the budget is tight', () => {
    const previous =
      '## Constraints\n- Only deploy on weekdays (ticket OPS-77).\n## Key entities and identifiers\n- 0b7c9e2f-1a2b-4c3d-8e9f-a0b1c2d3e4f5';
    const text = summarizer.summarizeSync({
      strategy: 'task_state',
      messages: noisy,
      maxTokens: 300,
      countTokens,
      previousSummary: previous,
    });
    expect(text).toContain('Only deploy on weekdays (ticket OPS-77).');
    expect(text).toContain('0b7c9e2f-1a2b-4c3d-8e9f-a0b1c2d3e4f5');
  });

  it('decision_log splits a decision from its rationale, both verbatim', () => {
    const messages = [
      msg('user', 'Fix the export.'),
      msg(
        'assistant',
        'Decided to stream the CSV export with a cursor instead of loading all rows, to avoid the out-of-memory kills.',
      ),
    ];
    const text = summarizer.summarizeSync({
      strategy: 'decision_log',
      messages,
      maxTokens: 300,
      countTokens,
    });
    expect(text).toContain(
      '- [1] Decided to stream the CSV export with a cursor instead of loading all rows :: to avoid the out-of-memory kills. :: assistant message :: -',
    );
  });

  it('does not read numbered code listings pasted in a message as constraints or goals', () => {
    const messages = [
      msg('user', 'Please fix the precision bug.'),
      msg(
        'user',
        '1463: msg = "The precision must be {} or {}".format(a, b)\n1470: if not x: raise ValueError()',
      ),
    ];
    const text = summarizer.summarizeSync({ strategy: 'task_state', messages, maxTokens: 300, countTokens });
    expect(text).not.toContain('1463:');
    expect(text).toContain('ValueError');
  });
});
