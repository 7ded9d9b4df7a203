import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, useTempFiles } from '../../../test/support/cli-fixtures.js';
import { syntheticSession } from '../../testing/synthetic-session.js';
import { EXIT_CODES } from '../run-cli.js';

const temp = useTempFiles();
const session = () => syntheticSession({ turns: 16, seed: 5 });
const WINDOW = '6000';

describe('replay', () => {
  it('prints a table with one row per compaction of the trace it writes, and archives with --out', async () => {
    const input = await temp.file('session.json', session());
    const trace = temp.path('trace.jsonl');
    const out = temp.path('archive');
    const run = await cli(['replay', input, '--max-context', WINDOW, '--trace', trace, '--out', out]);
    expect(run.code).toBe(EXIT_CODES.ok);
    const events = (await readFile(trace, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const decisions = events.filter((event) => event.name === 'compact.trigger_decision');
    const triggered = decisions.filter((event) => event.properties.triggered);
    expect(triggered.length).toBeGreaterThan(1);
    const rows = run.stdout.split('\n').filter((line) => /^\s*\d+\s+\d+\s+[\d,]+\s+[\d,]+\s/.test(line));
    expect(rows).toHaveLength(triggered.length);
    expect(run.stdout).toMatch(
      /^replay .*session\.json: \d+ messages, \d+ calls, gpt-4o \(window 6,000, trigger 5,100, budget/,
    );
    expect(run.stdout).toContain('levels (tokens freed)');
    expect(run.stdout).toMatch(/cleared [\d,]+/);
    expect(run.stdout).toContain(`${triggered.length} compactions in ${decisions.length} calls`);
    // The modeled prompt cache: each compaction rewrites the prefix once.
    const cache =
      /prompt cache \(modeled[^)]*\): ([\d.]+)% hit, (\d+) prefix rewrites, billed-equivalent input [\d,]+ tokens/.exec(
        run.stdout,
      );
    expect(cache).not.toBeNull();
    expect(Number(cache![2])).toBe(triggered.length);
    expect(Number(cache![1])).toBeGreaterThan(0);
    // Non-TTY progress: a few plain lines on stderr, ending at 100%.
    const progress = run.stderr.trim().split('\n');
    expect(progress.length).toBeLessThanOrEqual(11);
    expect(progress.at(-1)).toMatch(/^replay: call (\d+)\/\1 \(100%\)/);
    expect(run.stderr).not.toContain('\r');
    expect(run.stdout).toContain(`\narchive: ${out}\n`);
    const archived = await readdir(join(out, 'replay'));
    expect(archived).toContainEqual(
      expect.stringMatching(/^transcript-pre-compact-001-[0-9a-z]{9}-[0-9a-f]{8}\.jsonl$/),
    );
    expect(archived).toContain('events.jsonl');
  });

  // Node 20's recursive mkdir never settles under /proc (it loops with one CPU busy): the
  // replay stopped at its first archive write and never ended. Now the archive fails, the
  // conversation goes on without it, and the replay ends.
  it.runIf(process.platform === 'linux')(
    'ends when --out names a folder that cannot be made (under /proc)',
    async () => {
      const input = await temp.file('session.json', session());
      const run = await cli([
        'replay',
        input,
        '--max-context',
        WINDOW,
        '--out',
        '/proc/agent-compaction-no-such',
      ]);
      expect(run.code).toBe(EXIT_CODES.ok);
      expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^replay: call (\d+)\/\1 \(100%\)/);
      expect(run.stdout).toMatch(/compactions in \d+ calls/);
      expect(run.stdout).toContain('continue without archive');
      expect(run.stdout).toContain(
        'archive: none written (/proc/agent-compaction-no-such could not be written',
      );
      expect(run.stdout).not.toContain('archive: /proc');
    },
  );

  it('gives the same table with or without --out, and never a negative "freed" (issue 48)', async () => {
    // The docs' example, where an archive made the first summary longer than what it folded.
    const example = new URL('../../../docs/examples/coding-session.jsonl', import.meta.url).pathname;
    const body = (stdout: string) => stdout.split('\n').filter((line) => /^\s*\d+\s+\d+\s/.test(line));
    const plain = await cli(['replay', example, '--max-context', '4096']);
    const archived = await cli(['replay', example, '--max-context', '4096', '--out', temp.path('same')]);
    expect(plain.code).toBe(0);
    expect(body(plain.stdout).length).toBeGreaterThan(2);
    expect(body(archived.stdout)).toEqual(body(plain.stdout));
    const largest = (stdout: string) => /largest request sent ([\d,]+) tokens/.exec(stdout)?.[1];
    expect(largest(archived.stdout)).toBe(largest(plain.stdout));
    for (const run of [plain, archived])
      expect(run.stdout).not.toMatch(/(cleared|shortened|summarized|cut) -/);
  });

  it('with a window the transcript never crosses: no compactions, --json gives the calls', async () => {
    const input = await temp.file('grow.json', session());
    const run = await cli(['replay', input, '--max-context', '200000', '--json']);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.compactions).toEqual([]);
    expect(out.calls).toBeGreaterThan(10);
  });

  it('replays an archived session folder (its newest transcript)', async () => {
    const out = temp.path('archive-2');
    await cli(['replay', await temp.file('s2.json', session()), '--max-context', WINDOW, '--out', out]);
    const run = await cli(['replay', join(out, 'replay'), '--max-context', WINDOW, '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).calls).toBeGreaterThan(1);
  });

  it('draws a progress bar on a terminal', async () => {
    const { runCli } = await import('../run-cli.js');
    let stderr = '';
    const { Readable } = await import('node:stream');
    const code = await runCli(
      ['replay', await temp.file('tty.json', session().slice(0, 20)), '--max-context', WINDOW],
      {
        stdin: Readable.from([]),
        stdout: () => {},
        stderr: (text) => {
          stderr += text;
        },
        env: {},
        isTTY: true,
      },
    );
    expect(code).toBe(0);
    expect(stderr).toMatch(/\r\[#+-*\] replay: call \d+\/\d+ \(100%\)/);
  });

  it.each([
    ['missing file', async () => temp.path('nope.json'), /cannot read .*nope\.json: ENOENT/],
    ['empty file', async () => temp.file('empty.json', ''), /empty/],
    ['not JSON', async () => temp.file('bad.json', '{"role": "user",\n oops'), /line 1: not valid JSON/],
    ['wrong shape', async () => temp.file('shape.json', { conversation: [] }), /needs a "messages" array/],
    ['no messages', async () => temp.file('none.json', []), /holds no messages/],
    ['not objects', async () => temp.file('numbers.json', [1, 2]), /messages\[0\] is not a message object/],
    ['folder without transcript', async () => temp.path(''), /not an archived session/],
  ])('%s: one line on stderr and exit 2', async (_name, make, message) => {
    const run = await cli(['replay', await make(), '--max-context', WINDOW]);
    expect(run.code).toBe(EXIT_CODES.badInput);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stdout).toBe('');
  });
});
