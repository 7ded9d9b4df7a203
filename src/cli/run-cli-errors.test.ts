import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { chatSession, cli, type Run, useTempFiles, words } from '../../test/support/cli-fixtures.js';
import { EXIT_CODES } from './run-cli.js';

const temp = useTempFiles();
const file = temp.file;

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

  it('--max-context names one minimum, the window floor, whatever the bad value', async () => {
    const path = await file('floor.json', chatSession());
    const notNumber = oneLine(await cli(['compact', path, '--max-context', 'abc']));
    const tooSmall = oneLine(await cli(['compact', path, '--max-context', '100']));
    expect(tooSmall).toContain('>= 256');
    expect(notNumber).toContain('>= 256');
    // The proxy checks its flags before it listens: the same floor.
    const proxy = await cli(['proxy', '--upstream', 'http://127.0.0.1:9', '--max-context', '100']);
    expect(proxy.code).toBe(2);
    expect(oneLine(proxy)).toContain('--max-context must be an integer from 256');
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
      ['estimate', temp.path('does-not-exist.json')],
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

  it('a transcript ending with an assistant reply in a tiny window keeps the last user message or exits 3', async () => {
    const session = chatSession();
    session.push(
      { role: 'user', content: `Final question: ${words('ask', 60)}` },
      { role: 'assistant', content: words('answer', 200) },
    );
    const report = temp.path('ends-assistant-report.json');
    const input = await file('ends-assistant.json', session);
    const run = await cli(['compact', input, '--max-context', '300', '--report', report]);
    if (run.code === EXIT_CODES.insufficientBudget) {
      expect(run.stderr).toMatch(/budget|context limit/);
      return;
    }
    expect(run.code).toBe(0);
    const messages = JSON.parse(run.stdout) as { role: string; content: unknown }[];
    const written = JSON.parse(await readFile(report, 'utf8')) as {
      kept: { recentTurns: number };
      levels: { level: string }[];
    };
    // The last turn is kept, cut to fit when it must: a cut turn is not counted as kept verbatim.
    const cut = written.levels.some((level) => level.level === 'cut_oversized');
    expect(written.kept.recentTurns).toBe(cut ? 0 : 1);
    const lastUser = messages.findLast((m) => m.role === 'user');
    expect(JSON.stringify(lastUser?.content)).toContain('Final question');
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
