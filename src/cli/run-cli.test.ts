import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CODES, runCli } from './run-cli.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(argv: string[], stdin = ''): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdin: Readable.from([Buffer.from(stdin)]),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: {},
  });
  return { code, stdout, stderr };
}

let dir: string;
async function file(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const words = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${tag}-${i} src/app/${tag}.ts`).join(' ');

/** A chat session with parallel tool calls, long enough to compact in a 2,500-token window. */
function chatSession(): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: 'You are a coding agent in repo acme/shop.' },
  ];
  for (let t = 0; t < 8; t++) {
    messages.push({
      role: 'user',
      content: `Turn ${t}: fix ticket SHOP-${100 + t} in src/cart/cart-${t}.ts. ${words(`u${t}`, 20)}`,
    });
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${t}_a`,
          type: 'function',
          function: { name: 'read_file', arguments: `{"path":"src/cart/cart-${t}.ts"}` },
        },
        { id: `call_${t}_b`, type: 'function', function: { name: 'grep', arguments: '{"pattern":"total"}' } },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${t}_a`, content: words(`file${t}`, 30) });
    messages.push({ role: 'tool', tool_call_id: `call_${t}_b`, content: words(`grep${t}`, 20) });
    messages.push({
      role: 'assistant',
      content: `Decided to round totals in cart-${t}.ts because SHOP-${100 + t} needs cents.`,
    });
  }
  return messages;
}

function responsesSession(): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [
    { type: 'message', role: 'developer', content: 'Never delete files.' },
  ];
  for (let t = 0; t < 8; t++) {
    items.push({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: `Turn ${t}: ${words(`r${t}`, 25)}` }],
    });
    items.push({
      type: 'reasoning',
      id: `rs_${t}`,
      summary: [{ type: 'summary_text', text: `thinking ${t}` }],
    });
    items.push({
      type: 'function_call',
      id: `fc_${t}`,
      call_id: `call_${t}`,
      name: 'read_file',
      arguments: `{"path":"src/r${t}.ts"}`,
    });
    items.push({ type: 'function_call_output', call_id: `call_${t}`, output: words(`out${t}`, 30) });
    items.push({
      type: 'web_search_call',
      id: `ws_${t}`,
      status: 'completed',
      action: { type: 'search', query: `q${t}` },
    });
    items.push({
      type: 'message',
      id: `msg_${t}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: `Done ${t}.` }],
    });
  }
  return items;
}

function anthropicSession(): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  for (let t = 0; t < 8; t++) {
    messages.push({ role: 'user', content: `Turn ${t}: ${words(`a${t}`, 25)}` });
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading two files for turn ${t}.` },
        { type: 'tool_use', id: `toolu_${t}_a`, name: 'read_file', input: { path: `src/a${t}.ts` } },
        { type: 'tool_use', id: `toolu_${t}_b`, name: 'read_file', input: { path: `src/b${t}.ts` } },
      ],
    });
    messages.push({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: `toolu_${t}_a`, content: words(`ra${t}`, 25) },
        {
          type: 'tool_result',
          tool_use_id: `toolu_${t}_b`,
          content: [{ type: 'text', text: words(`rb${t}`, 25) }],
        },
      ],
    });
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `Turn ${t} done.` }] });
  }
  return messages;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-compaction-cli-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function summaryTexts(messages: unknown[]): string[] {
  return JSON.stringify(messages).match(/<COMPACT-SUMMARY v\d+>/g) ?? [];
}

describe('estimate', () => {
  it('prints {model, total, breakdown} for a JSON array, without window figures by default', async () => {
    const run = await cli(['estimate', await file('chat.json', chatSession())]);
    expect(run.code).toBe(EXIT_CODES.ok);
    expect(run.stderr).toBe('');
    const out = JSON.parse(run.stdout);
    expect(out.model).toBe('gpt-4o');
    expect(Object.keys(out.breakdown).sort()).toEqual(['developer', 'messages', 'system', 'tools_schema']);
    expect(out.total).toBe(
      out.breakdown.system + out.breakdown.developer + out.breakdown.tools_schema + out.breakdown.messages,
    );
    expect(out.breakdown.system).toBeGreaterThan(0);
    expect(out).not.toHaveProperty('max_context_tokens');
    expect(out).not.toHaveProperty('usage_pct');
  });

  it('--model picks the tokenizer and --max-context adds max_context_tokens and usage_pct', async () => {
    const path = await file('chat-model.json', chatSession());
    const o200k = JSON.parse((await cli(['estimate', path])).stdout);
    const run = await cli(['estimate', path, '--model', 'gpt-4', '--max-context', '8192']);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.model).toBe('gpt-4');
    expect(out.tokenizer).toBe('cl100k_base');
    expect(o200k.tokenizer).toBe('o200k_base');
    expect(out.max_context_tokens).toBe(8192);
    expect(out.usage_pct).toBeCloseTo(out.total / 8192, 5);
  });

  it('counts tools and a separate system prompt from an {messages, tools, system} object', async () => {
    const tools = [
      {
        name: 'read_file',
        description: 'Reads a file',
        input_schema: { type: 'object', properties: { path: { type: 'string' } } },
      },
    ];
    const bare = JSON.parse(
      (await cli(['estimate', await file('anthropic-bare.json', anthropicSession())])).stdout,
    );
    const run = await cli([
      'estimate',
      await file('anthropic-object.json', { messages: anthropicSession(), tools, system: 'You are terse.' }),
    ]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.breakdown.tools_schema).toBeGreaterThan(0);
    expect(out.breakdown.system).toBeGreaterThan(bare.breakdown.system);
    expect(out.breakdown.messages).toBe(bare.breakdown.messages);
  });

  it('reads JSON Lines and stdin (-) and counts them like the JSON array', async () => {
    const session = responsesSession();
    const array = JSON.parse((await cli(['estimate', await file('responses.json', session)])).stdout);
    const jsonl = await cli([
      'estimate',
      await file('responses.jsonl', session.map((m) => JSON.stringify(m)).join('\n')),
    ]);
    expect(jsonl.code).toBe(0);
    expect(JSON.parse(jsonl.stdout).total).toBe(array.total);
    const stdin = await cli(['estimate', '-'], JSON.stringify(session));
    expect(stdin.code).toBe(0);
    expect(JSON.parse(stdin.stdout).total).toBe(array.total);
    expect(array.breakdown.developer).toBeGreaterThan(0);
  });
});

describe('compact', () => {
  it('openai-chat: prints chat messages, one summary after the pinned system message, tool pairs whole', async () => {
    const session = chatSession();
    const run = await cli([
      'compact',
      await file('c.json', session),
      '--max-context',
      '2500',
      '--buffer',
      '200',
      '--max-summary-tokens',
      '300',
      '--keep-recent-turns',
      '2',
      '--keep-tool-io-pairs',
      '1',
    ]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>[];
    expect(out[0]).toEqual(session[0]);
    expect(out[1]!.role).toBe('assistant');
    expect(String(out[1]!.content)).toMatch(/^<COMPACT-SUMMARY v1>/);
    expect(summaryTexts(out)).toHaveLength(1);
    const calls = out.flatMap((m) => ((m.tool_calls as { id: string }[] | undefined) ?? []).map((c) => c.id));
    const results = out.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
    expect(results.sort()).toEqual([...calls].sort());
    expect(out.length).toBeLessThan(session.length);
  });

  it('openai-responses: prints Responses items and keeps unknown item types intact', async () => {
    const session = responsesSession();
    const run = await cli([
      'compact',
      await file('r.json', session),
      '--max-context',
      '2500',
      '--buffer',
      '200',
      '--max-summary-tokens',
      '300',
      '--force',
    ]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>[];
    expect(out[0]).toEqual(session[0]);
    expect(out[1]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text' }] });
    expect(summaryTexts(out)).toHaveLength(1);
    for (const item of out.slice(2)) expect(session).toContainEqual(item);
    const calls = out.filter((m) => m.type === 'function_call').map((m) => m.call_id);
    const outputs = out.filter((m) => m.type === 'function_call_output').map((m) => m.call_id);
    expect(outputs.sort()).toEqual([...calls].sort());
  });

  it('anthropic: prints Anthropic messages, several tool_result blocks per user message stay whole', async () => {
    const session = anthropicSession();
    const run = await cli([
      'compact',
      await file('a.json', { messages: session, system: 'You are terse.' }),
      '--max-context',
      '2500',
      '--buffer',
      '200',
      '--max-summary-tokens',
      '300',
      '--force',
    ]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as { role: string; content: unknown }[];
    expect(Array.isArray(out)).toBe(true);
    expect(out[0]).toEqual({ role: 'user', content: expect.stringMatching(/^<COMPACT-SUMMARY v1>/) });
    for (const message of out.slice(1)) expect(session).toContainEqual(message);
    const blocks = out.flatMap((m) =>
      Array.isArray(m.content) ? (m.content as Record<string, unknown>[]) : [],
    );
    const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id);
    const results = blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id);
    expect(results.sort()).toEqual([...uses].sort());
  });

  it('reads JSON Lines and stdin (-) and prints a JSON array', async () => {
    const session = chatSession();
    const args = ['--max-context', '2500', '--buffer', '200', '--max-summary-tokens', '300', '--force'];
    const fromJsonl = await cli([
      'compact',
      await file('c.jsonl', `${session.map((m) => JSON.stringify(m)).join('\n')}\n`),
      ...args,
    ]);
    const fromStdin = await cli(['compact', '-', ...args], JSON.stringify(session));
    expect(fromJsonl.code).toBe(0);
    expect(fromStdin.code).toBe(0);
    expect(JSON.parse(fromStdin.stdout)).toEqual(JSON.parse(fromJsonl.stdout));
  });

  it('--format forces the codec, and the output is the same as with auto detection', async () => {
    const path = await file('r-format.json', responsesSession());
    const args = ['--max-context', '2500', '--buffer', '200', '--max-summary-tokens', '300', '--force'];
    const auto = await cli(['compact', path, ...args, '--format', 'auto']);
    const forced = await cli(['compact', path, ...args, '--format', 'openai-responses']);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toBe(auto.stdout);
  });

  it('below the threshold without --force it prints the messages unchanged (meta stripped)', async () => {
    const session = [
      { role: 'user', content: 'hello', meta: { label: 'greeting' } },
      { role: 'assistant', content: 'hi' },
    ];
    const report = join(dir, 'below-report.json');
    const run = await cli([
      'compact',
      await file('small.json', session),
      '--max-context',
      '128000',
      '--report',
      report,
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi' },
    ]);
    const written = JSON.parse(await readFile(report, 'utf8'));
    expect(written.applied).toBe(false);
    expect(written.prunedCount).toBe(0);
  });

  it('--report writes the CompactionResult without messages, with consistent figures', async () => {
    const report = join(dir, 'report.json');
    const run = await cli([
      'compact',
      await file('c-report.json', chatSession()),
      '--max-context',
      '3000',
      '--buffer',
      '400',
      '--max-summary-tokens',
      '300',
      '--force',
      '--report',
      report,
    ]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as unknown[];
    const written = JSON.parse(await readFile(report, 'utf8'));
    expect(written).not.toHaveProperty('messages');
    expect(written).toMatchObject({
      applied: true,
      reason: 'manual',
      budget: 2600,
      version: 1,
      format: 'openai-chat',
    });
    expect(written.tokensAfter).toBeLessThanOrEqual(written.budget);
    expect(written.tokensAfter).toBeLessThan(written.tokensBefore);
    expect(written.prunedCount).toBeGreaterThan(0);
    expect(written.kept).toEqual({
      pinned: 1,
      recentTurns: expect.any(Number),
      toolPairs: expect.any(Number),
    });
    expect(written.summary.text).toBe(
      JSON.stringify(out).includes('COMPACT-SUMMARY') ? (out[1] as { content: string }).content : undefined,
    );
    // The figures agree with an estimate of what was printed.
    const outPath = await file('c-report-out.json', out);
    expect(JSON.parse((await cli(['estimate', outPath])).stdout).total).toBe(written.tokensAfter);
  });
});

describe('exit 2: bad input or options, one line naming the index and field', () => {
  const oneLine = (run: Run) => {
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    return run.stderr;
  };

  it('a missing role at index 3 names messages[3].role', async () => {
    const session = chatSession().slice(0, 3);
    session.splice(3, 0, { content: 'no role here' });
    for (const command of ['estimate', 'compact']) {
      const run = await cli([
        command,
        await file(`no-role-${command}.json`, session),
        '--max-context',
        '4000',
      ]);
      expect(run.code).toBe(EXIT_CODES.badInput);
      expect(oneLine(run)).toContain('messages[3].role');
    }
  });

  it('non-string content where text is required names messages[i].content', async () => {
    const run = await cli([
      'compact',
      await file('bad-content.json', [
        { role: 'user', content: 'hi' },
        { role: 'user', content: 42 },
      ]),
      '--max-context',
      '4000',
    ]);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toContain('messages[1].content');
  });

  it('an orphan tool result names its index', async () => {
    const session = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'let me look' },
      { role: 'tool', tool_call_id: 'call_missing', content: 'output' },
    ];
    const run = await cli(['compact', await file('orphan.json', session), '--max-context', '4000']);
    expect(run.code).toBe(2);
    const line = oneLine(run);
    expect(line).toContain('messages[2]');
    expect(line).toMatch(/orphan|call_missing/);
  });

  it('an Anthropic tool_result without its tool_use is rejected too', async () => {
    const session = [
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'x' }] },
    ];
    const run = await cli(['compact', await file('orphan-anthropic.json', session), '--max-context', '4000']);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toContain('messages[0]');
  });

  it.each([
    ['--max-context', 'NaN'],
    ['--max-context', '-5'],
    ['--max-context', '0'],
    ['--max-context', '12.5'],
    ['--max-context', 'abc'],
    ['--buffer', '-1'],
    ['--keep-recent-turns', '0'],
    ['--keep-tool-io-pairs', 'NaN'],
    ['--trigger-pct', 'NaN'],
    ['--trigger-pct', '-0.2'],
    ['--trigger-pct', '1.5'],
    ['--max-summary-tokens', '-3'],
    ['--strategy', 'no_such_strategy'],
  ])('%s %s is rejected with exit 2 naming the option', async (option, value) => {
    const args = ['compact', await file('ok.json', chatSession()), '--max-context', '4000', option, value];
    const run = await cli(args);
    expect(run.code).toBe(2);
    // The flag itself, never the internal option name.
    expect(oneLine(run)).toMatch(new RegExp(`^error: ${option}\\b`));
  });

  it.each([['--max-context=-5'], ['--buffer=-1'], ['--trigger-pct=-0.2'], ['--max-context=NaN']])(
    '%s (inline value) is rejected with exit 2 naming the option',
    async (argument) => {
      const run = await cli([
        'compact',
        await file('ok-inline.json', chatSession()),
        '--max-context',
        '4000',
        argument,
      ]);
      expect(run.code).toBe(2);
      const flag = argument.replace(/^(--[a-z-]+)=.*$/, '$1');
      expect(oneLine(run)).toMatch(new RegExp(`^error: ${flag}\\b`));
    },
  );

  it('a buffer as large as the window is rejected', async () => {
    const run = await cli([
      'compact',
      await file('ok2.json', chatSession()),
      '--max-context',
      '1000',
      '--buffer',
      '1000',
    ]);
    expect(run.code).toBe(2);
    expect(oneLine(run).trim()).toBe('error: --buffer must be smaller than --max-context (1000)');
  });

  it('the default buffer scales down to a small window instead of failing', async () => {
    const run = await cli(['compact', await file('ok2b.json', chatSession()), '--max-context', '500']);
    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain('--buffer must be smaller');
    expect(JSON.parse(run.stdout)[0].role).toBe('system');
  });

  it('an unknown --format is rejected', async () => {
    const run = await cli([
      'compact',
      await file('ok3.json', chatSession()),
      '--max-context',
      '4000',
      '--format',
      'xml',
    ]);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toContain('format');
  });

  it('compact without --max-context, an unknown command, a missing file, invalid JSON, an unknown option', async () => {
    const path = await file('ok4.json', chatSession());
    const cases: string[][] = [
      ['compact', path],
      ['shrink', path],
      ['estimate', join(dir, 'does-not-exist.json')],
      ['estimate', await file('broken.json', '[{"role": "user", "content": "hi"')],
      ['estimate', await file('scalar.json', '42')],
      ['estimate', await file('empty.json', '')],
      ['estimate', path, '--no-such-option'],
      ['estimate', path, 'extra-argument'],
    ];
    for (const argv of cases) {
      const run = await cli(argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.stderr.trim().split('\n'), argv.join(' ')).toHaveLength(1);
    }
  });

  it('an object input without a messages array is rejected', async () => {
    const run = await cli(['estimate', await file('no-messages.json', { items: [] })]);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toContain('messages');
  });

  it('a message that is not an object names its index', async () => {
    const run = await cli([
      'estimate',
      await file('not-object.json', [{ role: 'user', content: 'hi' }, 'oops']),
    ]);
    expect(run.code).toBe(2);
    expect(oneLine(run)).toContain('messages[1]');
  });
});

describe('exit 3: insufficient budget', () => {
  it('protected messages bigger than the window', async () => {
    const session = [
      { role: 'system', content: words('policy', 400) },
      { role: 'user', content: words('memo', 200), meta: { protected: true, label: 'Memo' } },
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi' },
    ];
    const run = await cli([
      'compact',
      await file('huge-pinned.json', session),
      '--max-context',
      '2000',
      '--buffer',
      '100',
      '--force',
    ]);
    expect(run.code).toBe(EXIT_CODES.insufficientBudget);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/protected|context limit/);
    expect(run.stderr).toContain('raise --max-context, or lower --buffer or --keep-recent-turns');
  });

  it('also without --force, when the history is over the budget', async () => {
    const session = [
      { role: 'developer', content: words('rules', 600) },
      { role: 'user', content: 'hello' },
    ];
    const run = await cli([
      'compact',
      await file('huge-dev.json', session),
      '--max-context',
      '2000',
      '--buffer',
      '100',
    ]);
    expect(run.code).toBe(3);
  });
});

describe('help', () => {
  it('--help prints the usage with exit 0; no command prints it with exit 2', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('agent-compaction estimate FILE');
    expect(help.stdout).toContain('agent-compaction compact FILE --max-context N');
    const none = await cli([]);
    expect(none.code).toBe(2);
  });
});
